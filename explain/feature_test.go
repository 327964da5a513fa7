package explain

import "testing"

func TestFeatureString(t *testing.T) {
	for _, c := range []struct {
		f    Feature
		want string
	}{
		{Feature{Kind: KindComm, Comm: "kubelet", CPU: -1}, "kubelet"},
		{Feature{Kind: KindFunction, Comm: "kubelet", Function: "mem_cgroup_nr_lru_pages", CPU: -1}, "kubelet in mem_cgroup_nr_lru_pages"},
		{Feature{Kind: KindStack, Comm: "kubelet", Stack: []string{"a", "b"}, CPU: -1}, "kubelet: a → b"},
		{Feature{Kind: KindCPU, Comm: "kubelet", CPU: 39}, "kubelet on CPU 39"},
		{Feature{Kind: KindKernelCore, Comm: "kubelet", CPU: -1}, "kubelet pegging a CPU in the kernel"},
		{Feature{Kind: KindSeries, Series: "cpu.sys", CPU: 39}, "cpu.sys of CPU 39"},
		{Feature{Kind: KindSeries, Series: "cgroups", Label: "memory", CPU: -1}, "cgroups memory"},
	} {
		if got := c.f.String(); got != c.want {
			t.Errorf("%+v.String() = %q; want %q", c.f, got, c.want)
		}
		if c.f.KindName() == "" {
			t.Errorf("%+v.KindName() is empty", c.f)
		}
	}
}
