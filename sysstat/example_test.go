package sysstat_test

import (
	"fmt"
	"strings"
	"time"

	"github.com/subsecond/subsecond/sysstat"
)

func ExampleParse() {
	// sar -P ALL 1 1, recorded on a host whose local time is UTC.
	report := "Linux 6.1.0-18-amd64 (node-1) \t11/30/26 \t_x86_64_\t(2 CPU)\n" +
		"\n" +
		"23:40:37        CPU     %user     %nice   %system   %iowait    %steal     %idle\n" +
		"23:40:38        all     80.00      0.00     16.00      1.00      1.00      2.00\n" +
		"23:40:38          0     86.14      0.00      9.90      0.99      0.99      1.98\n" +
		"23:40:38          1     73.74      0.00     22.22      1.01      1.01      2.02\n" +
		"\n" +
		"Average:        CPU     %user     %nice   %system   %iowait    %steal     %idle\n" +
		"Average:        all     80.00      0.00     16.00      1.00      1.00      2.00\n"
	series, err := sysstat.Parse(strings.NewReader(report), sysstat.Options{Location: time.UTC})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, s := range series[:4] {
		p := s.Points[0]
		fmt.Println(s.Name, s.CPU, time.Unix(0, p.Time).UTC().Format(time.RFC3339), p.Value)
	}
	// Output:
	// cpu.usr -1 2026-11-30T23:40:38Z 80
	// cpu.usr 0 2026-11-30T23:40:38Z 86.14
	// cpu.usr 1 2026-11-30T23:40:38Z 73.74
	// cpu.nice -1 2026-11-30T23:40:38Z 0
}
