package admin

import (
	"fmt"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"
)

// BenchmarkWrongPasswordsFromManyAddresses: target (issue 30) — 300 wrong passwords from
// 300 addresses, 20 at a time, cost at most 20 s of the server's CPU, and at most about 60
// bcrypt checks, with the password hashed at bcrypt's default cost as ADMIN_PASSWORD_HASH
// is made. Run it with
//
//	go test -run '^$' -bench WrongPasswordsFromManyAddresses -benchtime 1x ./api/admin/
//
// It reports the CPU time of this process (the server is in it) and the checks run.
func BenchmarkWrongPasswordsFromManyAddresses(b *testing.B) {
	hash, err := bcrypt.GenerateFromPassword([]byte(testPassword), bcrypt.DefaultCost)
	if err != nil {
		b.Fatal(err)
	}
	var checks atomic.Int64
	var cpu, wall time.Duration
	for b.Loop() {
		b.StopTimer()
		cfg := openConfig(b)
		cfg.PasswordHash, cfg.ClientIP = string(hash), fromHeader
		cfg.PasswordChecked = func() { checks.Add(1) }
		f := newFixture(b, cfg)
		b.StartTimer()
		start, used := time.Now(), selfCPU()
		var wg sync.WaitGroup
		sem := make(chan struct{}, 20)
		for i := range 300 {
			sem <- struct{}{}
			wg.Go(func() {
				defer func() { <-sem }()
				f.signInFrom(fmt.Sprintf("198.51.%d.%d", i/250, i%250), "guess")
			})
		}
		wg.Wait()
		cpu += selfCPU() - used
		wall += time.Since(start)
	}
	n := float64(b.N)
	b.ReportMetric(cpu.Seconds()/n, "cpu-s")
	b.ReportMetric(wall.Seconds()/n, "wall-s")
	b.ReportMetric(float64(checks.Load())/n, "bcrypt-checks")
}

// selfCPU is the user and system time this process used so far.
func selfCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
