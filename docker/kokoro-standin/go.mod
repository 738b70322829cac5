module parla-kokoro-standin

go 1.26
