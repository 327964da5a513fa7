//go:build linux && cgo

package sqlite

/*
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MALLOC_ARENAS 2

// limit_arenas runs as the program loads, before the Go runtime starts
// the threads that would each take an arena: a limit set later leaves
// those it finds.
__attribute__((constructor)) static void limit_arenas(void) {
#ifdef M_ARENA_MAX
	mallopt(M_ARENA_MAX, MALLOC_ARENAS);
#endif
}

// count_arenas counts the arenas glibc's malloc_info reports, -1 where it
// cannot tell.
static int count_arenas(void) {
#ifdef __GLIBC__
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	if (f == NULL) {
		return -1;
	}
	int err = malloc_info(0, f);
	fclose(f);
	int n = err == 0 ? 0 : -1;
	for (char *p = buf; err == 0 && (p = strstr(p, "<heap nr=")) != NULL; p++) {
		n++;
	}
	free(buf);
	return n;
#else
	return -1;
#endif
}
*/
import "C"

// mallocArenas is the most arenas the C allocator (glibc's malloc, which
// SQLite's page caches and statements use) may keep; a C constructor sets
// it as the program loads, as MALLOC_ARENA_MAX=2 in the environment would.
// glibc gives each new thread an arena of its own, up to eight per core,
// and keeps what an arena freed for that arena's reuse alone: a server
// whose connections run on whichever of its threads is free spread
// SQLite's memory over up to sixteen arenas on two cores, and its RSS rose
// by about 4 MiB a minute under the soak's load (bench/soak on SQLite: the
// largest RSS of each minute went from 928 to 964 MiB in 10 minutes, peak
// 1,001 MiB), where with two arenas it stayed at 901 to 909 MiB until the
// last minute (peak 950 MiB).
const mallocArenas = C.MALLOC_ARENAS

// arenas returns how many arenas the C allocator holds, -1 where it
// cannot tell.
func arenas() int { return int(C.count_arenas()) }
