// lib.c: a shared library the forms workload loads from a path with spaces
// and parentheses, and from a file it deletes after loading.
volatile unsigned long lib_sink;
__attribute__((noinline)) void lib_spin(unsigned long n) {
	for (unsigned long i = 0; i < n; i++)
		lib_sink += i * 7;
}
