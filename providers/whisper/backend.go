package whisper

import (
	"fmt"

	"parla/providers"
)

// device is one compute device ggml registered (its C API: ggml_backend_dev_name,
// _description and _type).
type device struct {
	name, description string
	// gpu: GGML_BACKEND_DEVICE_TYPE_GPU or _IGPU, the types whisper.cpp offloads to.
	gpu bool
}

// chooseBackend names the device whisper.cpp computes on by its own rule
// (whisper_backend_init_gpu with the default use_gpu and gpu_device 0): the first GPU ggml
// lists, else the CPU with threads threads.
func chooseBackend(devs []device, threads int) string {
	for _, d := range devs {
		if d.gpu {
			return fmt.Sprintf("%s (%s)", d.name, d.description)
		}
	}
	return fmt.Sprintf("CPU, %d threads", threads)
}

// The engine's optional capabilities (providers.go).
var (
	_ providers.BackendNamer       = (*Engine)(nil)
	_ providers.TranslationChecker = (*Engine)(nil)
)

// Backend says where whisper.cpp computes: "CUDA0 (NVIDIA H100 80GB HBM3)" in a CUDA build
// that sees a GPU, "CPU, 8 threads" otherwise, "" in a binary built without whisper. The
// startup log and /readyz show it to the operator, who otherwise could not tell a CUDA
// build running on the CPU (no driver, no --gpus) from one on the GPU.
func (e *Engine) Backend() string {
	devs, ok := devices()
	if !ok {
		return ""
	}
	return chooseBackend(devs, e.threads)
}
