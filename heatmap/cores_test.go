package heatmap_test

import (
	"testing"

	"github.com/subsecond/subsecond"
	"github.com/subsecond/subsecond/heatmap"
	"github.com/subsecond/subsecond/query"
)

// TestSystemLeafKinds checks System on hand-made stacks: only a kernel leaf
// counts, whatever the callers are; idle samples never count.
func TestSystemLeafKinds(t *testing.T) {
	kf := func(s string) subsecond.Frame { return subsecond.Frame{Symbol: s, Kind: subsecond.KindKernel} }
	uf := func(s string) subsecond.Frame { return subsecond.Frame{Symbol: s, Kind: subsecond.KindUser} }
	jf := func(s string) subsecond.Frame { return subsecond.Frame{Symbol: s, Kind: subsecond.KindJIT} }
	b := subsecond.NewBuilder()
	add := func(cpu int32, t int64, comm string, pid int32, frames ...subsecond.Frame) {
		b.Add(&subsecond.Sample{Comm: comm, PID: pid, TID: pid, CPU: cpu, Time: t, Event: "cpu-clock", Frames: frames})
	}
	// CPU 0, bucket 0: four busy samples, two of them in the kernel at the leaf.
	add(0, 0, "app", 7, kf("copy_user"), kf("vfs_read"), uf("main"))                                  // syscall: system
	add(0, 10e6, "app", 7, uf("memcpy"), uf("main"))                                                  // user
	add(0, 20e6, "app", 7, uf("main"), kf("entry_SYSCALL_64"))                                        // user leaf on a kernel caller: user
	add(0, 30e6, "kworker/0:1", 9, kf("process_one_work"), kf("kthread"))                             // kernel thread: system
	add(0, 40e6, "swapper", 0, kf("intel_idle"), kf("do_idle"))                                       // idle: neither
	add(0, 50e6, "app", 7)                                                                            // no stack: busy, not system
	add(0, 60e6, "java", 8, jf("Interpreter"), uf("JavaMain"))                                        // JIT: user
	add(1, 0, "swapper", 0, kf("net_rx_action"), kf("__do_softirq"), kf("intel_idle"), kf("do_idle")) // interrupt while idle: system
	c := b.Capture(subsecond.Profile{})
	c.Profile.FrequencyHz = 100 // 10 samples expected per 0.1 s bucket
	k, err := heatmap.PerCore(c, query.Filter{}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if k.Expected != 10 {
		t.Fatalf("Expected = %v; want 10", k.Expected)
	}
	want := [][2]float64{{0.6, 0.2}, {0.1, 0.1}} // busy, system per CPU
	for r, w := range want {
		if k.Busy[r][0] != w[0] || k.System[r][0] != w[1] {
			t.Errorf("CPU %d: busy %v system %v; want %v, %v", k.CPUs[r], k.Busy[r][0], k.System[r][0], w[0], w[1])
		}
	}
	// The filter applies: only=user keeps stacks with a user frame, and of
	// those the syscall is still system time.
	k, err = heatmap.PerCore(c, query.Filter{Only: "user"}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if k.Busy[0][0] != 0.4 || k.System[0][0] != 0.1 {
		t.Errorf("only=user: busy %v system %v; want 0.4, 0.1", k.Busy[0][0], k.System[0][0])
	}
	if got := k.Fractions(heatmap.MeasureSystem); &got[0][0] != &k.System[0][0] {
		t.Errorf("Fractions(system) is not System")
	}
	if got := k.Fractions(heatmap.MeasureBusy); &got[0][0] != &k.Busy[0][0] {
		t.Errorf("Fractions(busy) is not Busy")
	}
}

func TestSystemUnknownRateAndClamp(t *testing.T) {
	b := subsecond.NewBuilder()
	for i := range 6 {
		fr := subsecond.Frame{Symbol: "f", Kind: subsecond.KindUser}
		if i < 4 {
			fr = subsecond.Frame{Symbol: "k", Kind: subsecond.KindKernel}
		}
		b.Add(&subsecond.Sample{Comm: "a", PID: 1, CPU: int32(i % 2), Time: int64(i) * 10e6, Event: "e", Frames: []subsecond.Frame{fr}})
	}
	c := b.Capture(subsecond.Profile{})
	// Unknown rate: the busiest bucket (3 samples) sets the scale.
	c.Profile.FrequencyHz = 0
	k, err := heatmap.PerCore(c, query.Filter{}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if k.Expected != 3 || k.System[0][0] != 2.0/3 || k.System[1][0] != 2.0/3 {
		t.Errorf("unknown rate: expected %v system %v; want 3, [[2/3] [2/3]]", k.Expected, k.System)
	}
	// A rate below the samples seen: fractions clamp to 1.
	c.Profile.FrequencyHz = 10 // 1 sample expected per bucket
	k, err = heatmap.PerCore(c, query.Filter{}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if k.System[0][0] != 1 || k.Busy[0][0] != 1 {
		t.Errorf("clamp: busy %v system %v; want 1, 1", k.Busy[0][0], k.System[0][0])
	}
}

// TestSystemSinglesOutPeggedCore generates an incident whose training
// threads keep their cores busy in user mode, and checks the claim the
// cores map's colouring rests on: counted in one-second buckets, the pegged
// core's system fraction is ≥ 90% through its planted windows, and no other
// core comes near that, while busy fraction alone does not single it out.
func TestSystemSinglesOutPeggedCore(t *testing.T) {
	c, truth := generatedIncident(t, 16)
	k, err := heatmap.PerCore(c, query.Filter{}, 1e9)
	if err != nil {
		t.Fatal(err)
	}
	// Whole seconds inside a planted window.
	planted := 0
	inWindow := map[int]bool{}
	for _, w := range truth.Incidents {
		for s := (w.StartNS - k.T0 + 1e9 - 1) / 1e9; (s+1)*1e9 <= w.EndNS-k.T0; s++ {
			inWindow[int(s)] = true
			planted++
		}
	}
	if planted < 3 {
		t.Fatalf("only %d whole planted seconds; the test needs a longer incident", planted)
	}
	hot := func(frac [][]float64, r int) int {
		n := 0
		for _, v := range frac[r] {
			if v >= 0.9 {
				n++
			}
		}
		return n
	}
	busyRivals := 0
	for r, cpu := range k.CPUs {
		if int(cpu) == truth.Config.IncidentCPU {
			for s := range inWindow {
				if v := k.System[r][s]; v < 0.9 {
					t.Errorf("pegged CPU %d second %d: system %.2f; want ≥ 0.9", cpu, s, v)
				}
			}
			continue
		}
		if n := hot(k.System, r); n > 1 {
			t.Errorf("CPU %d has %d seconds at ≥ 90%% system; want at most 1 (the pegged core has %d)", cpu, n, planted)
		}
		if hot(k.Busy, r) >= planted {
			busyRivals++
		}
	}
	t.Logf("pegged CPU %d: %d planted seconds; %d other CPUs ≥ 90%% busy as long", truth.Config.IncidentCPU, planted, busyRivals)
	// Without this, busy fraction alone would do and the test would prove
	// nothing about System.
	if busyRivals == 0 {
		t.Errorf("no other core is ≥ 90%% busy for %d seconds; the incident does not exercise the system measure", planted)
	}
}
