package workload

// GenShareGPT lets the external tests (which may import the tokenizer package, as workload
// itself must not) generate ShareGPT files.
var GenShareGPT = genShareGPT
