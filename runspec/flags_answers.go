package runspec

import (
	"github.com/spf13/pflag"
)

// bindAnswersFlags registers the structured-output flag (runspec/answers.go); answers
// datasets come in through --dataset answers:FILE and --slo correct.
func bindAnswersFlags(fs *pflag.FlagSet, s *Spec) {
	fs.StringVar(&s.ResponseFormat, "response-format", s.ResponseFormat, "ask for structured output and check every answer (OpenAI response_format): json (a JSON object) or json-schema:FILE (a JSON Schema, sent strict); invalid answers are counted, the first violation of each kept in its record; --slo correct counts only valid ones in goodput")
}
