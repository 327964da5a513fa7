package main

import (
	"fmt"
	"io"
	"strconv"

	"github.com/subsecond/subsecond/heatmap"
)

// cellsText lays a cores map's cells out as text, a capture's (`subsecond
// cpus`) or a host's night's (`subsecond timeline`): one line per CPU of
// at most width characters, each character standing for per buckets.
type cellsText struct {
	c         *heatmap.Cells
	per, cols int
}

func newCellsText(c *heatmap.Cells, width int) cellsText {
	per, cols := fitColumns(c.Buckets, width)
	return cellsText{c: c, per: per, cols: cols}
}

// fitColumns returns how many buckets each character of a row of at most
// width characters stands for, and how many characters the row has.
func fitColumns(buckets, width int) (per, cols int) {
	per = max(1, (buckets+width-1)/width)
	return per, (buckets + per - 1) / per
}

// span returns the nanoseconds one character stands for.
func (t cellsText) span() int64 { return int64(t.per) * t.c.Bucket }

// writeRows writes one line per CPU: each character shades the mean of
// frac (the cells' Busy or System) over its buckets as ░ ▒ ▓ █, then come
// the row's mean and peak of those means, and after(r).
//
// covered is nil for a capture, whose every bucket counts (one without
// samples is idle) and whose row mean is over its buckets. For a night it
// is each bucket's covered fraction: a character whose buckets no capture
// covers is drawn ·, a bucket without samples has no fraction and is left
// out of its character's mean, and the row mean is over the characters
// drawn.
func (t cellsText) writeRows(w io.Writer, frac [][]float64, covered []float64, after func(r int) string) {
	c, night := t.c, covered != nil
	line := make([]rune, t.cols)
	for r, cpu := range c.CPUs {
		var sum, peak, n float64
		for col := range line {
			var s, cov float64
			k := 0
			for b := col * t.per; b < min((col+1)*t.per, c.Buckets); b++ {
				if !night || c.Samples[r][b] > 0 {
					s += frac[r][b]
					k++
				}
				if night {
					cov += covered[b]
				}
			}
			if night && cov == 0 {
				line[col] = '·'
				continue
			}
			m := 0.0
			if k > 0 {
				m = s / float64(k)
			}
			line[col] = shade(m, 1)
			peak = max(peak, m)
			if night {
				sum, n = sum+m, n+1
			} else {
				sum, n = sum+s, n+float64(k)
			}
		}
		mean := 0.0 // in per cent
		switch {
		case n == 0:
		case night:
			mean = 100 * (sum / n)
		default:
			mean = 100 * sum / n
		}
		fmt.Fprintf(w, "%8s │%s│ %4.0f%% %4.0f%%%s\n", "cpu "+strconv.Itoa(int(cpu)), string(line), mean, 100*peak, after(r))
	}
}
