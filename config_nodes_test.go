package main

import (
	"strings"
	"testing"
	"time"
)

// The heartbeat and the death timeout are read from the environment (the fault suite makes
// them short), default to 2 s and 10 s, and a death timeout under three beats is refused.
func TestNodeTimingConfig(t *testing.T) {
	c, err := loadConfig(envOf(map[string]string{}))
	if err != nil || c.HeartbeatEvery != 2*time.Second || c.NodeDeadAfter != 10*time.Second {
		t.Errorf("defaults %s %s, %v", c.HeartbeatEvery, c.NodeDeadAfter, err)
	}
	c, err = loadConfig(envOf(map[string]string{"NODE_HEARTBEAT": "200ms", "NODE_DEAD_AFTER": "1s"}))
	if err != nil || c.HeartbeatEvery != 200*time.Millisecond || c.NodeDeadAfter != time.Second {
		t.Errorf("short %s %s, %v", c.HeartbeatEvery, c.NodeDeadAfter, err)
	}
	for _, env := range []map[string]string{
		{"NODE_HEARTBEAT": "2s", "NODE_DEAD_AFTER": "5s"},
		{"NODE_HEARTBEAT": "0s"},
		{"NODE_DEAD_AFTER": "soon"},
	} {
		if _, err := loadConfig(envOf(env)); err == nil || !strings.Contains(err.Error(), "NODE_") {
			t.Errorf("%v: %v", env, err)
		}
	}
}
