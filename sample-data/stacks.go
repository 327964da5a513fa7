package sampledata

import (
	"hash/fnv"
	"math/rand/v2"
	"strconv"
	"strings"
)

// DSO names as perf prints them inside the parentheses of a frame line.
const (
	dsoKernel  = "[kernel.kallsyms]"
	dsoNvidia  = "[nvidia]"
	dsoMlx5    = "[mlx5_core]"
	dsoLibc    = "/usr/lib/x86_64-linux-gnu/libc.so.6"
	dsoStdcxx  = "/usr/lib/x86_64-linux-gnu/libstdc++.so.6.0.30"
	dsoCuda    = "/usr/lib/x86_64-linux-gnu/libcuda.so.535.161.08"
	dsoMlx5U   = "/usr/lib/x86_64-linux-gnu/libmlx5.so.1.24.39.0"
	dsoPython  = "/opt/conda/bin/python3.10"
	dsoTorchPy = "/opt/conda/lib/python3.10/site-packages/torch/lib/libtorch_python.so"
	dsoTorch   = "/opt/conda/lib/python3.10/site-packages/torch/lib/libtorch_cpu.so"
	dsoTorchCU = "/opt/conda/lib/python3.10/site-packages/torch/lib/libtorch_cuda.so"
	dsoC10CU   = "/opt/conda/lib/python3.10/site-packages/torch/lib/libc10_cuda.so"
	dsoCudart  = "/opt/conda/lib/python3.10/site-packages/nvidia/cuda_runtime/lib/libcudart.so.12"
	dsoCublas  = "/opt/conda/lib/python3.10/site-packages/nvidia/cublas/lib/libcublasLt.so.12"
	dsoNccl    = "/opt/conda/lib/python3.10/site-packages/nvidia/nccl/lib/libnccl.so.2"
	dsoPIL     = "/opt/conda/lib/python3.10/site-packages/PIL/_imaging.cpython-310-x86_64-linux-gnu.so"
	dsoJpeg    = "/opt/conda/lib/libjpeg.so.8.2.2"
	dsoKubelet = "/usr/bin/kubelet"
	dsoCtrd    = "/usr/bin/containerd"
	dsoShim    = "/usr/bin/containerd-shim-runc-v2"
	dsoRunc    = "/usr/bin/runc"
	dsoJournal = "/usr/lib/systemd/systemd-journald"
	dsoSDShr   = "/usr/lib/systemd/libsystemd-shared-249.so"
)

// fr is one frame of a stack template: a symbol ("[unknown]" when perf
// could not resolve it) in a DSO.
type fr struct{ sym, dso string }

// chain is a run of frames, root first.
type chain []fr

// seg returns the frames of a ';'-separated symbol list in one DSO, root first.
func seg(dso, syms string) chain {
	parts := strings.Split(syms, ";")
	c := make(chain, len(parts))
	for i, s := range parts {
		c[i] = fr{s, dso}
	}
	return c
}

// k returns kernel frames, root first.
func k(syms string) chain { return seg(dsoKernel, syms) }

// cat joins chains root first.
func cat(cs ...chain) chain {
	var out chain
	for _, c := range cs {
		out = append(out, c...)
	}
	return out
}

// one returns one of cs, chosen by r.
func one(r *rand.Rand, cs ...chain) chain { return cs[r.IntN(len(cs))] }

// maybe returns c with probability p and nothing otherwise.
func maybe(r *rand.Rand, p float64, c chain) chain {
	if r.Float64() < p {
		return c
	}
	return nil
}

// unknowns returns n unresolved frames in dso, as perf prints code without
// symbols (a stripped driver library).
func unknowns(dso string, n int) chain {
	c := make(chain, n)
	for i := range c {
		c[i] = fr{"[unknown]", dso}
	}
	return c
}

// Kernel entry and scheduling paths shared by several templates.
var (
	sysEntry    = k("entry_SYSCALL_64_after_hwframe;do_syscall_64")
	schedOut    = k("schedule;__schedule;finish_task_switch.isra.0")
	futexWait   = cat(sysEntry, k("__x64_sys_futex;do_futex;futex_wait;futex_wait_queue_me"), schedOut)
	pageFault   = k("asm_exc_page_fault;exc_page_fault;do_user_addr_fault;handle_mm_fault;__handle_mm_fault;handle_pte_fault")
	idleRoot    = k("secondary_startup_64_no_verify;start_secondary;cpu_startup_entry;do_idle;cpuidle_idle_call;call_cpuidle;cpuidle_enter;cpuidle_enter_state")
	idleRootCPU = k("secondary_startup_64_no_verify;x86_64_start_kernel;x86_64_start_reservations;start_kernel;arch_call_rest_init;rest_init;cpu_startup_entry;do_idle;cpuidle_idle_call;call_cpuidle;cpuidle_enter;cpuidle_enter_state")
)

// idleStack is the idle loop: the swapper task halted in intel_idle.
func idleStack(cpu0 bool) func(r *rand.Rand) chain {
	return func(r *rand.Rand) chain {
		root := idleRoot
		if cpu0 {
			root = idleRootCPU
		}
		return cat(root, k("intel_idle"))
	}
}

// idleIRQ is interrupt and softirq work taken on the idle task: the local
// timer, RCU callbacks, IPIs and NVMe completions.
func idleIRQ(cpu0 bool) func(r *rand.Rand) chain {
	return func(r *rand.Rand) chain {
		root := idleRoot
		if cpu0 {
			root = idleRootCPU
		}
		work := one(r,
			cat(k("asm_sysvec_apic_timer_interrupt;sysvec_apic_timer_interrupt;__sysvec_apic_timer_interrupt;hrtimer_interrupt;__hrtimer_run_queues;tick_sched_timer;tick_sched_handle;update_process_times"),
				one(r, k("scheduler_tick;task_tick_fair;update_load_avg"), k("rcu_sched_clock_irq;rcu_pending"), k("run_local_timers;raise_softirq"))),
			k("asm_sysvec_apic_timer_interrupt;sysvec_apic_timer_interrupt;irq_exit_rcu;__irq_exit_rcu;__do_softirq;rcu_core_si;rcu_core;rcu_do_batch;kmem_cache_free"),
			k("asm_sysvec_apic_timer_interrupt;sysvec_apic_timer_interrupt;irq_exit_rcu;__irq_exit_rcu;__do_softirq;run_timer_softirq;__run_timers.part.0;call_timer_fn;delayed_work_timer_fn;__queue_work;try_to_wake_up"),
			k("asm_sysvec_call_function_single;sysvec_call_function_single;__sysvec_call_function_single;generic_smp_call_function_single_interrupt;flush_smp_call_function_queue;sched_ttwu_pending;ttwu_do_activate;enqueue_task_fair"),
			k("asm_common_interrupt;common_interrupt;__common_interrupt;handle_edge_irq;handle_irq_event;__handle_irq_event_percpu;nvme_irq;nvme_process_cq;nvme_pci_complete_rq;blk_mq_end_request;blk_update_request;bio_endio"),
		)
		return cat(root, k("intel_idle"), work)
	}
}

// nicRX is the mlx5 receive path below net_rx_action.
func nicRX(r *rand.Rand) chain {
	napi := cat(k("net_rx_action;__napi_poll"), seg(dsoMlx5, "mlx5e_napi_poll"))
	rx := seg(dsoMlx5, "mlx5e_poll_rx_cq;mlx5e_handle_rx_cqe_mpwrq")
	deliver := k("napi_gro_receive;napi_gro_complete.constprop.0;netif_receive_skb_list_internal;__netif_receive_skb_list_core;ip_list_rcv;ip_sublist_rcv;ip_list_rcv_finish.constprop.0;ip_local_deliver;ip_local_deliver_finish;ip_protocol_deliver_rcu;tcp_v4_rcv;tcp_v4_do_rcv;tcp_rcv_established")
	return cat(napi, one(r,
		cat(rx, deliver, one(r, k("tcp_data_queue;tcp_queue_rcv;skb_try_coalesce"), k("tcp_ack;tcp_clean_rtx_queue;__kfree_skb;skb_release_data"), k("tcp_data_queue;sock_def_readable;__wake_up_common_lock;_raw_spin_unlock_irqrestore"))),
		cat(rx, seg(dsoMlx5, "mlx5e_skb_from_cqe_mpwrq_linear"), k("napi_build_skb;__napi_build_skb;memset_erms")),
		cat(rx, k("napi_gro_receive;dev_gro_receive;inet_gro_receive;tcp4_gro_receive;tcp_gro_receive")),
		cat(seg(dsoMlx5, "mlx5e_post_rx_mpwqes;mlx5e_alloc_rx_mpwqe"), k("page_pool_alloc_pages;__page_pool_alloc_pages_slow;__alloc_pages_bulk;get_page_from_freelist")),
		cat(seg(dsoMlx5, "mlx5e_poll_tx_cq"), k("napi_consume_skb;skb_release_data;page_frag_free")),
	))
}

// nicIdle is NIC receive work done in softirq context on the idle task.
func nicIdle(r *rand.Rand) chain {
	return cat(idleRoot, k("intel_idle;asm_common_interrupt;common_interrupt;irq_exit_rcu;__irq_exit_rcu;__do_softirq"), nicRX(r))
}

// nicKsoftirqd is NIC receive work deferred to the per-CPU ksoftirqd thread.
func nicKsoftirqd(r *rand.Rand) chain {
	return cat(k("ret_from_fork;kthread;smpboot_thread_fn;run_ksoftirqd;__do_softirq"), nicRX(r))
}

// pyRoot is the CPython interpreter's entry into a script, then depth levels
// of Python calls.
func pyRoot(r *rand.Rand, depth int) chain {
	c := cat(seg(dsoPython, "_start"), seg(dsoLibc, "__libc_start_main_impl;__libc_start_call_main"),
		seg(dsoPython, "main;Py_BytesMain;Py_RunMain;pymain_run_python;_PyRun_AnyFileObject;_PyRun_SimpleFileObject;pyrun_file;run_mod;run_eval_code_obj;PyEval_EvalCode"))
	return append(c, pyCalls(r, depth)...)
}

// pyCalls is depth levels of Python function calls, each an evaluation loop
// and a call helper.
func pyCalls(r *rand.Rand, depth int) chain {
	helpers := []string{"_PyFunction_Vectorcall", "_PyFunction_Vectorcall", "method_vectorcall", "PyObject_Call", "_PyObject_FastCallDictTstate", "slot_tp_call", "_PyObject_Call_Prepend"}
	var c chain
	for range depth {
		c = append(c, fr{"_PyEval_EvalFrameDefault", dsoPython}, fr{helpers[r.IntN(len(helpers))], dsoPython})
	}
	return append(c, fr{"_PyEval_EvalFrameDefault", dsoPython})
}

// cudaDriver is a call into the closed driver library, sometimes ending in
// an ioctl into the kernel module.
func cudaDriver(r *rand.Rand) chain {
	c := unknowns(dsoCuda, 2+r.IntN(3))
	if r.IntN(3) == 0 {
		c = cat(c, seg(dsoLibc, "ioctl"), sysEntry, k("__x64_sys_ioctl"), seg(dsoNvidia, "nvidia_unlocked_ioctl;nvidia_ioctl;rm_ioctl"), unknowns(dsoNvidia, 1+r.IntN(3)))
	}
	return c
}

// gemm is a cuBLAS matrix multiply launched from libtorch_cuda.
func gemm(r *rand.Rand, dtype string) chain {
	return cat(seg(dsoTorchCU, "at::native::(anonymous namespace)::addmm_out_cuda_impl;at::cuda::blas::gemm<"+dtype+">"),
		seg(dsoCublas, "cublasLtMatmul"), unknowns(dsoCublas, 1+r.IntN(2)), cudaDriver(r))
}

// trainMain is a training process's main thread: Python driving forward,
// backward, the optimizer and host-device synchronisation.
func trainMain(r *rand.Rand) chain {
	py := pyRoot(r, 3+r.IntN(5))
	op := one(r,
		cat(seg(dsoTorchPy, "torch::autograd::THPVariable_linear"), seg(dsoTorch, "at::_ops::linear::call;at::native::linear;at::_ops::addmm::call"),
			seg(dsoTorchCU, "at::(anonymous namespace)::wrapper_CUDA_addmm;at::native::structured_addmm_out_cuda::impl"), gemm(r, "c10::BFloat16")),
		cat(seg(dsoTorchPy, "torch::autograd::THPVariable_item"), seg(dsoTorch, "at::_ops::item::call;at::native::item;at::_ops::_local_scalar_dense::call"),
			seg(dsoTorchCU, "at::native::_local_scalar_dense_cuda"), seg(dsoC10CU, "c10::cuda::memcpy_and_sync"), seg(dsoCudart, "cudaStreamSynchronize"), unknowns(dsoCudart, 1),
			one(r, unknowns(dsoCuda, 3+r.IntN(3)), cat(unknowns(dsoCuda, 2), seg(dsoLibc, "__sched_yield"), sysEntry, k("__x64_sys_sched_yield;do_sched_yield"), schedOut))),
		cat(seg(dsoTorchPy, "THPEngine_run_backward;torch::autograd::python::PythonEngine::execute"), seg(dsoTorch, "torch::autograd::Engine::execute;torch::autograd::Engine::execute_with_graph_task"),
			one(r, cat(seg(dsoTorch, "torch::autograd::Engine::thread_main;torch::autograd::ReadyQueue::pop"), seg(dsoStdcxx, "std::condition_variable::wait"), seg(dsoLibc, "pthread_cond_wait@@GLIBC_2.3.2"), futexWait),
				cat(seg(dsoTorch, "torch::autograd::Engine::thread_main;torch::autograd::Engine::evaluate_function;torch::autograd::call_function;torch::autograd::generated::NativeLayerNormBackward0::apply"), seg(dsoTorchCU, "at::native::layer_norm_backward_cuda"), seg(dsoCudart, "cudaLaunchKernel"), cudaDriver(r)))),
		cat(seg(dsoTorchPy, "torch::autograd::THPVariable__foreach_add_"), seg(dsoTorch, "at::_ops::_foreach_add__List::call"),
			seg(dsoTorchCU, "at::native::foreach_tensor_add_list_kernel_cuda_;at::native::(anonymous namespace)::multi_tensor_apply<3>"), seg(dsoCudart, "cudaLaunchKernel"), cudaDriver(r)),
		seg(dsoPython, "PyObject_GetAttr;_PyObject_GenericGetAttrWithDict;_PyType_Lookup"),
		seg(dsoPython, "_PyObject_MakeTpCall;dict_subscript;lookdict_unicode_nodummy"),
	)
	return cat(py, op)
}

// autograd is the autograd engine's device thread running backward kernels.
func autograd(r *rand.Rand) chain {
	root := cat(seg(dsoLibc, "__GI___clone3;start_thread"), seg(dsoStdcxx, "execute_native_thread_routine"),
		seg(dsoTorchPy, "torch::autograd::python::PythonEngine::thread_init"), seg(dsoTorch, "torch::autograd::Engine::thread_init;torch::autograd::Engine::thread_main"))
	return cat(root, one(r,
		cat(seg(dsoTorch, "torch::autograd::Engine::evaluate_function;torch::autograd::call_function;torch::autograd::Node::operator();torch::autograd::generated::MmBackward0::apply;torch::autograd::generated::details::mm_mat1_backward;at::_ops::mm::call"),
			seg(dsoTorchCU, "at::(anonymous namespace)::wrapper_CUDA_mm;at::native::structured_mm_out_cuda::impl"), gemm(r, "c10::BFloat16")),
		cat(seg(dsoTorch, "torch::autograd::Engine::evaluate_function;torch::autograd::call_function;torch::autograd::Node::operator();torch::autograd::generated::GeluBackward0::apply;at::_ops::gelu_backward::call"),
			seg(dsoTorchCU, "at::native::structured_gelu_backward_out_cuda::impl;at::native::GeluBackwardCUDAKernelImpl"), seg(dsoCudart, "cudaLaunchKernel"), cudaDriver(r), cudaDriver(r)),
		cat(seg(dsoTorch, "torch::autograd::Engine::evaluate_function;torch::autograd::InputBuffer::add;at::_ops::add_Tensor::call"),
			seg(dsoTorchCU, "at::(anonymous namespace)::wrapper_CUDA_add_Tensor;at::native::add_kernel;at::native::gpu_kernel_with_scalars"), seg(dsoCudart, "cudaLaunchKernel"), cudaDriver(r), unknowns(dsoCuda, 3)),
		cat(seg(dsoTorch, "torch::autograd::ReadyQueue::pop"), seg(dsoStdcxx, "std::condition_variable::wait"), seg(dsoLibc, "pthread_cond_wait@@GLIBC_2.3.2"), futexWait, k("psi_task_switch;psi_group_change")),
	))
}

// ncclProgress is an NCCL proxy progress thread polling InfiniBand
// completions or yielding when it has nothing to do. Its busy-poll stacks are
// shallow, as they are in real captures.
func ncclProgress(r *rand.Rand) chain {
	root := cat(seg(dsoLibc, "__GI___clone3;start_thread"), seg(dsoNccl, "ncclProxyProgress"))
	return cat(root, one(r,
		cat(seg(dsoNccl, "progressOps"), one(r, seg(dsoNccl, "sendProxyProgress;ncclIbTest;ncclIbMultiTest"), seg(dsoNccl, "recvProxyProgress;ncclIbTest;ncclIbMultiTest"), seg(dsoNccl, "sendProxyProgress;ncclIbIsend;ncclIbMultiSend")),
			one(r, seg(dsoMlx5U, "mlx5_poll_cq_v1"), seg(dsoMlx5U, "mlx5_poll_one"), seg(dsoMlx5U, "mlx5_post_send"))),
		cat(seg(dsoNccl, "progressOps;recvProxyProgress"), unknowns(dsoCuda, 2)),
		cat(seg(dsoLibc, "__sched_yield"), sysEntry, k("__x64_sys_sched_yield;do_sched_yield;schedule;__schedule"),
			one(r, k("pick_next_task_fair;newidle_balance;load_balance;find_busiest_group;update_sd_lb_stats.constprop.0;update_sg_lb_stats"), k("finish_task_switch.isra.0"))),
	))
}

// dataWorker is a DataLoader worker process: Python decoding JPEGs,
// stacking tensors and reading files.
func dataWorker(r *rand.Rand) chain {
	py := pyRoot(r, 4+r.IntN(5))
	return cat(py, one(r,
		cat(seg(dsoPIL, "_decode;ImagingJpegDecode"), seg(dsoJpeg, "jpeg_read_scanlines;process_data_simple_main;decompress_onepass"),
			one(r, seg(dsoJpeg, "decode_mcu_AC_refine"), seg(dsoJpeg, "jsimd_idct_islow_avx2"), seg(dsoJpeg, "decode_mcu_DC_first"))),
		cat(seg(dsoPIL, "_resize;ImagingResample;ImagingResampleInner"), seg(dsoPIL, "ImagingResampleHorizontal_8bpc")),
		cat(seg(dsoTorchPy, "torch::autograd::THPVariable_stack"), seg(dsoTorch, "at::_ops::stack::call;at::native::stack;at::_ops::cat::call;at::native::structured_cat_out_cpu::impl;at::native::cat_serial_kernel"), seg(dsoLibc, "__memmove_avx_unaligned_erms"),
			maybe(r, 0.4, cat(pageFault, k("do_anonymous_page;alloc_pages_vma;__alloc_pages;get_page_from_freelist;clear_page_erms")))),
		cat(seg(dsoPython, "_io_FileIO_readall"), seg(dsoLibc, "__libc_read"), sysEntry,
			k("__x64_sys_read;ksys_read;vfs_read;new_sync_read;ext4_file_read_iter;generic_file_read_iter;filemap_read"),
			one(r, k("copy_page_to_iter;_copy_to_iter;copy_user_enhanced_fast_string"), k("filemap_get_pages;page_cache_ra_unbounded;read_pages;ext4_mpage_readpages;submit_bio"))),
	))
}

// goSyscall is a Go program's path from a syscall wrapper into the kernel.
func goSyscall(dso, call string) chain {
	return cat(seg(dso, "syscall."+call+";syscall."+strings.ToLower(call)+";syscall.Syscall;syscall.RawSyscall6;runtime/internal/syscall.Syscall6.abi0"), sysEntry)
}

// goUnixWrite is a Go program writing to a unix socket.
func goUnixWrite(r *rand.Rand, dso string) chain {
	return cat(seg(dso, "net.(*conn).Write;net.(*netFD).Write;internal/poll.(*FD).Write;internal/poll.ignoringEINTRIO"), goSyscall(dso, "Write"),
		k("__x64_sys_write;ksys_write;vfs_write;new_sync_write;sock_write_iter;sock_sendmsg;unix_stream_sendmsg"),
		one(r, k("sock_def_readable;__wake_up_common_lock;__wake_up_common;ep_poll_callback;_raw_spin_unlock_irqrestore"),
			k("sock_alloc_send_pskb;alloc_skb_with_frags;__alloc_skb;kmalloc_reserve;__kmalloc_node_track_caller"),
			k("skb_copy_datagram_from_iter;copy_user_enhanced_fast_string")))
}

// goSchedWait is a Go scheduler thread parking in epoll or a futex.
func goSchedWait(r *rand.Rand, dso string) chain {
	root := seg(dso, "runtime.mstart.abi0;runtime.mstart0;runtime.mstart1;runtime.schedule;runtime.findRunnable")
	return cat(root, one(r,
		cat(seg(dso, "runtime.netpoll;runtime.epollwait.abi0"), sysEntry, k("__x64_sys_epoll_pwait;do_epoll_wait;ep_poll;schedule_hrtimeout_range;schedule_hrtimeout_range_clock"), schedOut, k("psi_task_switch")),
		cat(seg(dso, "runtime.stopm;runtime.mPark;runtime.notesleep;runtime.futexsleep;runtime.futex.abi0"), sysEntry, k("__x64_sys_futex;do_futex;futex_wait;futex_wait_queue_me"), schedOut, k("psi_task_switch;psi_group_change")),
	))
}

const (
	cadvisorPkg = "github.com/google/cadvisor"
	runcFS      = "github.com/opencontainers/runc/libcontainer/cgroups/fs"
)

// memcgRead is the planted incident: cAdvisor in the kubelet reading a
// cgroup's memory.stat, the kernel walking every memory cgroup below it.
func memcgRead(r *rand.Rand) chain {
	top := one(r,
		seg(dsoKubelet, "runtime.goexit.abi0;"+cadvisorPkg+"/manager.(*containerData).housekeeping;"+cadvisorPkg+"/manager.(*containerData).housekeepingTick;"+cadvisorPkg+"/manager.(*containerData).updateStats"),
		seg(dsoKubelet, "runtime.goexit.abi0;"+cadvisorPkg+"/manager.(*manager).globalHousekeeping;"+cadvisorPkg+"/manager.(*manager).detectSubcontainers;"+cadvisorPkg+"/manager.(*containerData).updateStats"),
	)
	return cat(top,
		seg(dsoKubelet, cadvisorPkg+"/container/libcontainer.(*Handler).GetStats;"+runcFS+".(*manager).GetStats;"+runcFS+".(*MemoryGroup).GetStats"),
		one(r, seg(dsoKubelet, "github.com/opencontainers/runc/libcontainer/cgroups/fscommon.ParseKeyValue;bufio.(*Scanner).Scan"), seg(dsoKubelet, "bufio.(*Scanner).Scan")),
		seg(dsoKubelet, "os.(*File).Read;os.(*File).read;internal/poll.(*FD).Read;internal/poll.ignoringEINTRIO"), goSyscall(dsoKubelet, "Read"),
		k("__x64_sys_read;ksys_read;vfs_read;kernfs_fop_read_iter;seq_read_iter;kernfs_seq_show;cgroup_seqfile_show;memcg_stat_show;mem_cgroup_nr_lru_pages"))
}

// kubelet is the node agent's ordinary work: pod lifecycle events, CRI
// calls, /proc reads and scheduler waits.
func kubelet(r *rand.Rand) chain {
	return one(r,
		cat(seg(dsoKubelet, "runtime.goexit.abi0;k8s.io/kubernetes/pkg/kubelet/pleg.(*GenericPLEG).Relist;k8s.io/kubernetes/pkg/kubelet/kuberuntime.(*kubeGenericRuntimeManager).GetPods;k8s.io/cri-client/pkg.(*remoteRuntimeService).ListContainers;google.golang.org/grpc.(*ClientConn).Invoke;google.golang.org/grpc.invoke;google.golang.org/grpc.(*clientStream).SendMsg;google.golang.org/grpc/internal/transport.(*http2Client).Write;golang.org/x/net/http2.(*Framer).WriteData;bufio.(*Writer).Flush"), goUnixWrite(r, dsoKubelet)),
		cat(seg(dsoKubelet, "runtime.goexit.abi0;"+cadvisorPkg+"/manager.(*containerData).housekeeping;"+cadvisorPkg+"/manager.(*containerData).updateStats;"+cadvisorPkg+"/container/libcontainer.(*Handler).GetStats;"+cadvisorPkg+"/container/libcontainer.networkStatsFromProc;os.ReadFile;os.(*File).Read;internal/poll.(*FD).Read;internal/poll.ignoringEINTRIO"),
			goSyscall(dsoKubelet, "Read"), k("__x64_sys_read;ksys_read;vfs_read;seq_read;seq_read_iter;dev_seq_show;dev_get_stats;mlx5e_get_stats64"), seg(dsoMlx5, "mlx5e_fold_sw_stats64")),
		goSchedWait(r, dsoKubelet),
	)
}

// containerd is the container runtime daemon answering CRI and task calls.
func containerd(r *rand.Rand) chain {
	return one(r,
		cat(seg(dsoCtrd, "runtime.goexit.abi0;google.golang.org/grpc.(*Server).serveStreams.func1.2;google.golang.org/grpc.(*Server).handleStream;google.golang.org/grpc.(*Server).processUnaryRPC;github.com/containerd/containerd/api/services/tasks/v1._Tasks_Get_Handler;github.com/containerd/containerd/services/tasks.(*local).Get;github.com/containerd/containerd/runtime/v2.(*shimTask).State;github.com/containerd/ttrpc.(*Client).Call;github.com/containerd/ttrpc.(*Client).dispatch;github.com/containerd/ttrpc.(*channel).send;bufio.(*Writer).Flush"), goUnixWrite(r, dsoCtrd)),
		cat(seg(dsoCtrd, "runtime.goexit.abi0;github.com/containerd/containerd/pkg/cri/server.(*criService).ListContainerStats;github.com/containerd/containerd/pkg/cri/server.(*criService).toCRIContainerStats;github.com/containerd/containerd/metadata.(*containerStore).List;go.etcd.io/bbolt.(*DB).View;go.etcd.io/bbolt.(*Cursor).Next;go.etcd.io/bbolt.(*Cursor).next;go.etcd.io/bbolt.(*Cursor).first"),
			pageFault, k("do_fault;do_read_fault;filemap_map_pages;next_uptodate_page")),
		goSchedWait(r, dsoCtrd),
	)
}

// shim is the per-pod containerd shim waiting on its task and reaping.
func shim(r *rand.Rand) chain {
	return one(r,
		cat(seg(dsoShim, "runtime.goexit.abi0;github.com/containerd/containerd/runtime/v2/runc/task.(*service).processExits;github.com/containerd/containerd/runtime/v2/runc/task.(*service).checkProcesses;github.com/containerd/containerd/runtime/v2/runc/task.(*service).send;github.com/containerd/ttrpc.(*Client).dispatch;github.com/containerd/ttrpc.(*channel).send;bufio.(*Writer).Flush"), goUnixWrite(r, dsoShim)),
		cat(seg(dsoShim, "runtime.goexit.abi0;github.com/containerd/containerd/sys/reaper.Reap;golang.org/x/sys/unix.Wait4;golang.org/x/sys/unix.wait4;syscall.Syscall6;syscall.RawSyscall6;runtime/internal/syscall.Syscall6.abi0"), sysEntry, k("__x64_sys_wait4;kernel_wait4;do_wait;release_task;__exit_signal;__put_task_struct;free_task;free_thread_stack;vfree")),
		goSchedWait(r, dsoShim),
	)
}

// runc is the OCI runtime creating a container: forking into namespaces.
func runc(r *rand.Rand) chain {
	return cat(seg(dsoRunc, "runtime.main;main.main;github.com/urfave/cli.(*App).Run;github.com/urfave/cli.Command.Run;main.glob..func2;main.startContainer;main.(*runner).run;github.com/opencontainers/runc/libcontainer.(*linuxContainer).Run;github.com/opencontainers/runc/libcontainer.(*linuxContainer).start;github.com/opencontainers/runc/libcontainer.(*initProcess).start;os/exec.(*Cmd).Start;os.StartProcess;syscall.StartProcess;syscall.forkExec;syscall.forkAndExecInChild;syscall.forkAndExecInChild1"),
		sysEntry, k("__x64_sys_clone;kernel_clone;copy_process"),
		one(r, k("dup_mm;dup_mmap;copy_page_range;copy_pte_range"), k("copy_namespaces;create_new_namespaces;copy_net_ns;setup_net;ops_init"), k("copy_files;dup_fd;alloc_fdtable;__kmalloc_node")))
}

// journald is the journal daemon appending to its mapped journal file.
func journald(r *rand.Rand) chain {
	root := cat(seg(dsoJournal, "_start"), seg(dsoLibc, "__libc_start_main_impl;__libc_start_call_main"), seg(dsoJournal, "main"),
		seg(dsoSDShr, "sd_event_run;sd_event_dispatch;source_dispatch"), seg(dsoJournal, "server_process_datagram;server_dispatch_message;dispatch_message_real;write_to_journal"),
		seg(dsoSDShr, "journal_file_append_entry;journal_file_append_data"))
	return cat(root, one(r,
		cat(seg(dsoSDShr, "journal_file_move_to_object;journal_file_move_to"), pageFault, k("do_fault;do_shared_fault;__do_fault;filemap_fault;filemap_map_pages;next_uptodate_page")),
		cat(seg(dsoSDShr, "journal_file_hmac_put_object;gcry_md_write"), seg(dsoLibc, "__memmove_avx_unaligned_erms"), pageFault, k("do_fault;do_shared_fault;do_page_mkwrite;ext4_page_mkwrite;block_page_mkwrite;mark_buffer_dirty")),
	))
}

// kworker is a kernel writeback worker flushing dirty pages.
func kworker(r *rand.Rand) chain {
	return cat(k("ret_from_fork;kthread;worker_thread;process_one_work;wb_workfn;wb_do_writeback;wb_writeback;__writeback_inodes_wb;writeback_sb_inodes;__writeback_single_inode;do_writepages;ext4_writepages"),
		one(r, k("ext4_do_writepages;mpage_prepare_extent_to_map;mpage_process_page_bufs;mpage_submit_page;ext4_bio_write_page;submit_bio;submit_bio_noacct;blk_mq_submit_bio;blk_mq_try_issue_directly"),
			k("ext4_do_writepages;ext4_map_blocks;ext4_ext_map_blocks;ext4_mb_new_blocks;ext4_mb_regular_allocator;ext4_mb_good_group;ext4_get_group_info"),
			k("ext4_do_writepages;mpage_prepare_extent_to_map;pagevec_lookup_range_tag;find_get_pages_range_tag;xas_find_marked")))
}

// hash64 is FNV-1a over the parts, the source of every address and offset,
// so the same symbol gets the same address in every sample and every run.
func hash64(parts ...string) uint64 {
	h := fnv.New64a()
	for _, p := range parts {
		h.Write([]byte(p))
		h.Write([]byte{0})
	}
	return h.Sum64()
}

// symAddr returns where a symbol starts: kernel text, a module's area, or
// a DSO-relative offset as perf prints user addresses.
func symAddr(f fr) uint64 {
	h := hash64(f.dso, f.sym)
	switch {
	case f.dso == dsoKernel:
		return 0xffffffff81000000 + (h%0x1400000)&^0xf
	case strings.HasPrefix(f.dso, "["):
		return 0xffffffffc0000000 + (hash64(f.dso)%0x40)<<20 + (h%0x80000)&^0xf
	case f.dso == dsoTorchCU || f.dso == dsoTorch || f.dso == dsoCuda || f.dso == dsoCublas:
		return 0x400000 + (h%0x10000000)&^0xf
	default:
		return 0x1000 + (h%0x800000)&^0xf
	}
}

// render formats a root-first chain as perf script prints it: leaf first,
// one tab-indented frame per line. Each caller frame's offset is fixed by
// its call site (the callee); the leaf's offset depends on variant.
func render(c chain, variant int) []byte {
	var b []byte
	for i := len(c) - 1; i >= 0; i-- {
		f := c[i]
		var off uint64
		var ctx string
		if i == len(c)-1 {
			ctx = "leaf#" + strconv.Itoa(variant)
			off = 1 + hash64(f.dso, f.sym, ctx)%0x180
		} else {
			ctx = c[i+1].sym + "@" + strconv.Itoa(i)
			off = 5 + hash64(f.dso, f.sym, c[i+1].dso, c[i+1].sym)%0x3f0
		}
		addr := symAddr(f) + off
		if f.sym == "[unknown]" {
			// Unresolved code: perf prints the address alone. Vary it by
			// call site so a stripped library does not look like one function.
			addr = symAddr(fr{ctx, f.dso}) + hash64(ctx)%0x40
		}
		b = append(b, '\t')
		b = appendPadHex(b, addr, 16)
		b = append(b, ' ')
		b = append(b, f.sym...)
		if f.sym != "[unknown]" {
			b = append(b, "+0x"...)
			b = strconv.AppendUint(b, off, 16)
		}
		b = append(b, " ("...)
		b = append(b, f.dso...)
		b = append(b, ")\n"...)
	}
	return b
}

// appendPadHex appends v in lower-case hex, right-aligned in width columns.
func appendPadHex(b []byte, v uint64, width int) []byte {
	var tmp [16]byte
	s := strconv.AppendUint(tmp[:0], v, 16)
	for i := len(s); i < width; i++ {
		b = append(b, ' ')
	}
	return append(b, s...)
}
