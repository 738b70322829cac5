package moneysim

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"parla/api/credit"
	"parla/providers/testkit"
)

// The simulation runs on SQLite, and on Postgres with PARLA_TEST_DB=postgres (make go-test
// runs both).
func TestMain(m *testing.M) { os.Exit(testkit.RunWithDB(m)) }

// Seeds run by default: SQLite's many, Postgres's fewer (each step there is a round trip).
const (
	seedsSQLite   = 300
	seedsPostgres = 60
	stepsPerSeed  = 45
)

// TestMoneySimulation drives the real order book and credit ledger through seeded random
// sequences of steps (actions_test.go's menu) and checks the money after every step against
// the model (check_test.go); at each seed's end every fault is healed, the clock goes past
// every bound, and every paid order must be delivered or refunded, never both, and every
// hold ended. SIM_SEEDS=n runs n seeds, SIM_SEED=n replays one; a failure prints the line
// that replays it and the seed's steps. River works in real time and most of a step is
// waiting for it, so the seeds run on several worlds at once, each on a database of its own
// and each seed on orders and keys of its own; a replay takes the same steps, and what
// depends on the queue's timing (a race the step starts) may fall otherwise.
func TestMoneySimulation(t *testing.T) {
	first, n := seedRange(t)
	worlds := make([]*world, min(n, parallelWorlds))
	for i := range worlds {
		worlds[i] = newWorld(t)
	}
	start := time.Now()
	for _, msg := range runSeeds(t, worlds, first, n) {
		t.Error(msg)
	}
	t.Logf("%d seeds of %d steps on %d worlds in %s", n, stepsPerSeed, len(worlds), time.Since(start).Round(time.Millisecond))
}

// runSeeds plays seeds first to first+n-1 on the worlds, each taking the next seed, until
// one fails; it returns the failures.
func runSeeds(t *testing.T, worlds []*world, first, n int) []string {
	seeds := make(chan int, n)
	for seed := first; seed < first+n; seed++ {
		seeds <- seed
	}
	close(seeds)
	var mu sync.Mutex
	var failures []string
	var wg sync.WaitGroup
	for _, w := range worlds {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for seed := range seeds {
				msg, steps := runSeed(w, seed)
				mu.Lock()
				if msg != "" {
					failures = append(failures, msg)
				} else if n == 1 {
					t.Logf("seed %d passed; its steps:\n%s", seed, steps) // a replay shows them
				}
				stop := len(failures) > 0
				mu.Unlock()
				if stop {
					return
				}
			}
		}()
	}
	wg.Wait()
	return failures
}

// parallelWorlds is how many worlds run seeds at once.
const parallelWorlds = 8

// runSeed plays one seed on w; it returns what failed, with the line that replays it and
// the seed's steps, or "", and the steps.
func runSeed(w *world, seed int) (failure, steps string) {
	s := &sim{w: w, seed: seed, rng: rand.New(rand.NewPCG(uint64(seed), 0x5eed)), ctx: context.Background()}
	err := s.run()
	steps = strings.Join(s.log, "\n")
	if err == nil {
		return "", steps
	}
	return fmt.Sprintf("seed %d: %v\nreplay: %s\nsteps of seed %d:\n%s", seed, err, replayLine(seed), seed, steps), steps
}

// seedRange is the seeds to run: SIM_SEED alone, else SIM_SEEDS of them from 1.
func seedRange(t *testing.T) (first, n int) {
	t.Helper()
	if v := os.Getenv("SIM_SEED"); v != "" {
		seed, err := strconv.Atoi(v)
		if err != nil {
			t.Fatalf("SIM_SEED=%q: %v", v, err)
		}
		return seed, 1
	}
	n = seedsSQLite
	if os.Getenv("PARLA_TEST_DB") == "postgres" {
		n = seedsPostgres
	}
	if v := os.Getenv("SIM_SEEDS"); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil {
			t.Fatalf("SIM_SEEDS=%q: %v", v, err)
		}
	}
	return 1, n
}

// replayLine is the command that runs one seed again, on the same database kind.
func replayLine(seed int) string {
	db := ""
	if os.Getenv("PARLA_TEST_DB") == "postgres" {
		db = "PARLA_TEST_DB=postgres "
	}
	return fmt.Sprintf("%sSIM_SEED=%d go test -count=1 -run TestMoneySimulation ./api/moneysim/", db, seed)
}

// sim is one seed's run and its model: the orders and keys it made, what it knows was paid,
// settled and refunded.
type sim struct {
	w      *world
	seed   int
	rng    *rand.Rand
	ctx    context.Context
	log    []string
	orders []*order
	keys   []*key
}

// order is the model of one order: what the provider took and what the operator did.
type order struct {
	id, session string
	intent      string // the payment intent once paid at the provider
	told        bool   // the book was told of the payment (a webhook handled, a page answered)
	// healthy: its engine failed fewer times than the attempts allow (only a shutdown
	// stopped a run of it), so it must not be given up as production_failed.
	healthy bool
	// refundedDone: the operator refunded it delivered (done), so it is both by intent.
	refundedDone bool
}

// key is the model of one API key: what was bought and what the simulation settled.
type key struct {
	id      string
	intent  string
	bought  int64 // cents
	settled int64 // thousandths of a cent
	holds   []*hold
	// ended: its payment was refunded or disputed at the provider (and the webhook told);
	// spentEnded: a call was held on it after that.
	ended, spentEnded bool
}

// hold is one call's hold as the simulation holds it: held until settled, released or
// killed (its node died: nobody ends it but the ledger's own rule).
type hold struct {
	h     credit.Hold
	state string
}

// run plays the seed: its steps, each followed by the checks, then the end.
func (s *sim) run() error {
	s.w.heal()
	for i := range stepsPerSeed {
		a, line, err := s.step()
		s.log = append(s.log, fmt.Sprintf("%2d %-10s %s", i, a.name, line))
		if err != nil {
			return fmt.Errorf("step %d (%s): %w", i, a.name, err)
		}
		if err := s.settle(); err != nil {
			return fmt.Errorf("after step %d (%s): %w", i, a.name, err)
		}
	}
	if err := s.end(); err != nil {
		return fmt.Errorf("at the end: %w", err)
	}
	return nil
}

// step takes one step of the menu that has something to act on (an action with nothing to
// act on, "no order", is picked again, a few times).
func (s *sim) step() (a action, line string, err error) {
	for range 5 {
		a = pick(s.rng)
		if line, err = a.do(s); err != nil || !strings.HasPrefix(line, "no ") {
			break
		}
	}
	return a, line, err
}

// settle lets the queue finish what the step started, then checks the money (also when
// the queue could not finish: the checks may say why).
func (s *sim) settle() error {
	return errors.Join(s.w.drain(s.ctx), s.check())
}

// endBound is the longest bound of the states' exits: a refund of unknown fate is listed
// stuck a job timeout after it went out, and any row past its bound is moved by the next
// reconciler's run; once, with every fault healed, every state must have taken its exit.
const endBound = jobTimeout + reconcileInterval

// end heals every fault, delivers the webhooks the provider still owes (Stripe retries a
// failed one for days; none was handled or the confirmation page never answered), moves
// the clock past the longest bound, sweeps and reconciles once, lets the queue finish, and
// checks that every state took its exit.
func (s *sim) end() error {
	s.w.heal()
	s.log = append(s.log, "-- end: faults healed, owed webhooks delivered, clock past every bound")
	for _, o := range s.orders {
		if o.intent != "" && !o.told {
			if err := s.webhook(o, "evt_end_"+o.session); err != nil {
				s.log = append(s.log, "   end webhook "+o.id+": "+err.Error())
			}
		}
	}
	s.w.clock.advance(endBound)
	s.log = append(s.log, "   "+s.w.periodic(s.ctx))
	if err := s.settle(); err != nil {
		return err
	}
	return s.checkEnded()
}
