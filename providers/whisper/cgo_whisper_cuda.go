//go:build whisper && cuda

package whisper

// The CUDA build (`make whisper WHISPER_GPU=cuda`, which sets the tag): ggml's CUDA backend
// and the CUDA libraries it calls. This file sorts after cgo_whisper.go, so these come after
// -lggml on the link line: libggml registers the CUDA backend, and a static archive only
// serves symbols asked for by what precedes it. libcuda is the driver's (a stub at build
// time); the host or container must provide it at run time (see README: GPU).

/*
#cgo LDFLAGS: -lggml-cuda -lggml-base -lcudart -lcublas -lcublasLt -lcuda -lstdc++ -lm
*/
import "C"
