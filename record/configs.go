package record

// ConfigSweep is the index of a sweep over server configurations (sweep --server-cmd), the
// STEM.configs.json beside its records: each configuration's command, its files, its time to
// ready, and why it failed where it did. Each configuration's points are in its own records
// file, a sweep's like any other.
type ConfigSweep struct {
	Servebench string `json:"servebench_config_sweep"` // the version that wrote it
	// Template is the --server-cmd the configurations' commands were made from.
	Template string      `json:"template"`
	Configs  []ConfigRun `json:"configs"`
}

// ConfigRun is one configuration of a ConfigSweep.
type ConfigRun struct {
	Name    string   `json:"name"`
	Command string   `json:"command"`       // {port} unexpanded
	Env     []string `json:"env,omitempty"` // credential-like values redacted
	Records string   `json:"records,omitempty"`
	Log     string   `json:"log"`
	// ReadySeconds is the time from the start to the first ready answer; 0 when never ready.
	ReadySeconds float64 `json:"ready_s,omitempty"`
	// Failure is "" when the configuration served every point, else what happened, and
	// FailureStage when: "start" (it could not be started, or exited before it answered),
	// "ready" (it never answered within --ready-timeout) or "run" (it died during its points;
	// those that finished are in Records).
	Failure      string `json:"failure,omitempty"`
	FailureStage string `json:"failure_stage,omitempty"`
}
