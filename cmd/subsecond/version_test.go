package main

import (
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
)

func TestVersion(t *testing.T) {
	bi := &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: "github.com/subsecond/subsecond", Version: "v1.4.0"},
		Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "3f2a9c"}, {Key: "vcs.time", Value: "2026-11-30T10:00:00Z"}, {Key: "vcs.modified", Value: "true"}}}
	if got, want := versionText(bi), "subsecond v1.4.0 (revision 3f2a9c, 2026-11-30T10:00:00Z, modified) go1.26.8"; got != want {
		t.Errorf("versionText = %q; want %q", got, want)
	}
	bi.Settings, bi.Main.Version = nil, "(devel)"
	if got, want := versionText(bi), "subsecond (devel) (revision unknown: built without VCS information (-buildvcs=false)) go1.26.8"; got != want {
		t.Errorf("versionText without VCS = %q; want %q", got, want)
	}
	for _, flag := range []string{"--version", "-version"} {
		out, _, err := runCmd(t, nil, flag)
		if err != nil || !strings.HasPrefix(out, "subsecond ") || !strings.HasSuffix(out, " "+runtime.Version()+"\n") {
			t.Errorf("subsecond %s = %q, %v; want one line naming the version and %s", flag, out, err, runtime.Version())
		}
	}
}
