package whisper

import "testing"

func TestChooseBackendTakesTheFirstGPUAsWhisperDoes(t *testing.T) {
	cpu := device{name: "CPU", description: "AMD EPYC 9654"}
	h100 := device{name: "CUDA0", description: "NVIDIA H100 80GB HBM3", gpu: true}
	second := device{name: "CUDA1", description: "NVIDIA L4", gpu: true}
	for _, c := range []struct {
		devs []device
		want string
	}{
		{nil, "CPU, 4 threads"},
		{[]device{cpu}, "CPU, 4 threads"},
		{[]device{cpu, h100, second}, "CUDA0 (NVIDIA H100 80GB HBM3)"},
		{[]device{second, h100, cpu}, "CUDA1 (NVIDIA L4)"},
	} {
		if got := chooseBackend(c.devs, 4); got != c.want {
			t.Errorf("chooseBackend(%v) = %q, want %q", c.devs, got, c.want)
		}
	}
}

func TestBackendIsEmptyWithoutWhisper(t *testing.T) {
	if _, built := devices(); built {
		t.Skip("built with whisper: TestBackendNamesTheDevice checks it")
	}
	if got := New(Config{}).Backend(); got != "" {
		t.Errorf("Backend() = %q without whisper, want empty", got)
	}
}
