package main

import (
	"strings"
	"testing"
	"time"
)

// The heartbeat and the death timeout are read from the environment (the fault suite makes
// them short), default to 2 s and 10 s, and a death timeout under five beats is refused: the
// lease (the death timeout less two beats) must span three beats.
func TestNodeTimingConfig(t *testing.T) {
	c, err := loadConfig(envOf(map[string]string{}))
	if err != nil || c.HeartbeatEvery != 2*time.Second || c.NodeDeadAfter != 10*time.Second {
		t.Errorf("defaults %s %s, %v", c.HeartbeatEvery, c.NodeDeadAfter, err)
	}
	c, err = loadConfig(envOf(map[string]string{"NODE_HEARTBEAT": "200ms", "NODE_DEAD_AFTER": "1s"}))
	if err != nil || c.HeartbeatEvery != 200*time.Millisecond || c.NodeDeadAfter != time.Second {
		t.Errorf("short %s %s, %v", c.HeartbeatEvery, c.NodeDeadAfter, err)
	}
	// Five beats exactly: a lease of three.
	if _, err := loadConfig(envOf(map[string]string{"NODE_HEARTBEAT": "1s", "NODE_DEAD_AFTER": "5s"})); err != nil {
		t.Errorf("five beats: %v", err)
	}
	for _, env := range []map[string]string{
		{"NODE_HEARTBEAT": "2s", "NODE_DEAD_AFTER": "5s"},
		// Three beats (a lease of one) and 4.9 (a lease under three) were taken before.
		{"NODE_HEARTBEAT": "2s", "NODE_DEAD_AFTER": "6s"},
		{"NODE_HEARTBEAT": "1s", "NODE_DEAD_AFTER": "4900ms"},
		{"NODE_HEARTBEAT": "4s"}, // the default death timeout, 10 s, is 2.5 of these beats
		{"NODE_HEARTBEAT": "0s"},
		{"NODE_DEAD_AFTER": "soon"},
	} {
		if _, err := loadConfig(envOf(env)); err == nil || !strings.Contains(err.Error(), "NODE_") {
			t.Errorf("%v: %v", env, err)
		} else if env["NODE_DEAD_AFTER"] == "6s" && !strings.Contains(err.Error(), "fewer than 3 beats") {
			t.Errorf("%v: %v", env, err)
		}
	}
}
