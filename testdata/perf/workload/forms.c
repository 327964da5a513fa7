// forms.c: a workload that makes perf script print the frame forms Subsecond
// must read: inlined frames with source lines, a DSO whose path holds spaces
// and parentheses, a deleted DSO, code run from a memfd and from an anonymous
// mapping. With one argument it runs only the inlined functions.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

static volatile unsigned long sink;

static inline unsigned long mix(unsigned long x) {
	x ^= x >> 13;
	x *= 0x9E3779B97F4A7C15ul;
	return x ^ (x >> 29);
}

static inline unsigned long inner(unsigned long n) {
	unsigned long a = 0;
	for (unsigned long i = 0; i < n; i++)
		a += mix(i + a);
	return a;
}

__attribute__((noinline)) void compute(unsigned long n) { sink += inner(n); }

// spin counts rcx down from n: mov ecx, imm32; dec ecx; jnz -4; ret.
static const unsigned char spin[] = {0xb9, 0, 0, 0, 0, 0xff, 0xc9, 0x75, 0xfc, 0xc3};

static void (*load_code(int fd, unsigned n))(void) {
	unsigned char code[sizeof spin];
	memcpy(code, spin, sizeof spin);
	memcpy(code + 1, &n, 4);
	void *p;
	if (fd >= 0) {
		if (write(fd, code, sizeof code) != sizeof code) { perror("write"); exit(1); }
		p = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
	} else {
		p = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p != MAP_FAILED) memcpy(p, code, sizeof code);
	}
	if (p == MAP_FAILED) { perror("mmap"); exit(1); }
	return (void (*)(void))p;
}

__attribute__((noinline)) void run_memfd(void (*f)(void), int n) { for (int i = 0; i < n; i++) f(); }
__attribute__((noinline)) void run_anon(void (*f)(void), int n) { for (int i = 0; i < n; i++) f(); }

static double now(void) {
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv) {
	if (argc != 2 && argc != 4) {
		fprintf(stderr, "usage: forms SECONDS [LIB-WITH-SPACES LIB-TO-DELETE]\n");
		return 2;
	}
	double secs = atof(argv[1]);
	if (argc == 2) { // only the inlined functions
		double end = now() + secs;
		while (now() < end)
			compute(2000000);
		printf("%lu\n", sink);
		return 0;
	}
	void *spaced = dlopen(argv[2], RTLD_NOW | RTLD_LOCAL);
	void *deleted = dlopen(argv[3], RTLD_NOW | RTLD_LOCAL);
	if (!spaced || !deleted) { fprintf(stderr, "dlopen: %s\n", dlerror()); return 1; }
	unlink(argv[3]);
	void (*spin_spaced)(unsigned long) = (void (*)(unsigned long))dlsym(spaced, "lib_spin");
	void (*spin_deleted)(unsigned long) = (void (*)(unsigned long))dlsym(deleted, "lib_spin");
	int mfd = memfd_create("jitcode", 0);
	if (mfd < 0) { perror("memfd_create"); return 1; }
	void (*in_memfd)(void) = load_code(mfd, 20000000);
	void (*in_anon)(void) = load_code(-1, 20000000);
	double end = now() + secs;
	while (now() < end) {
		compute(2000000);
		spin_spaced(3000000);
		spin_deleted(3000000);
		run_memfd(in_memfd, 1);
		run_anon(in_anon, 1);
	}
	printf("%lu\n", sink);
	return 0;
}
