package flame

import (
	"bufio"
	"bytes"
	"encoding/xml"
	"fmt"
	"hash/fnv"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/subsecond/subsecond"
	"github.com/subsecond/subsecond/query"
)

// SVGOptions shape a standalone SVG. Zero fields take defaults.
type SVGOptions struct {
	Title string // default "Flame Graph"
	Width int    // pixels, default 1200
}

const (
	svgFrameH  = 16
	svgFont    = 12
	svgPad     = 10
	svgTop     = 50
	svgBottom  = 30
	svgMinPx   = 0.1 // narrower frames are left out, as flamegraph.pl does
	svgCharPx  = svgFont * 0.59
	svgMaxRows = 4096
)

// WriteSVG writes g as a standalone interactive SVG in the manner of
// flamegraph.pl: root at the bottom, hover details, click to zoom into a
// frame, "Search" (or Ctrl-F) highlights frames matching a regular
// expression and shows their share. It loads nothing from elsewhere;
// every name is XML-escaped. A differential graph colours frames red where
// their share grew from the base and blue where it shrank.
func (g *Graph) WriteSVG(w io.Writer, opt SVGOptions) error {
	if opt.Width <= 0 {
		opt.Width = 1200
	}
	if opt.Title == "" {
		opt.Title = "Flame Graph"
		if g.BaseN != nil {
			opt.Title = "Differential Flame Graph"
		}
	}
	n := g.Len()
	width := g.widths()
	x := make([]float64, n) // start of each node from the left, in width's units
	next := make([]float64, n)
	maxDepth := int32(0)
	for i := 1; i < n; i++ {
		p := g.Parent[i]
		x[i] = next[p]
		next[p] += width[i]
		next[i] = x[i]
		maxDepth = max(maxDepth, g.Depth[i])
	}
	maxDepth = min(maxDepth, svgMaxRows)
	height := svgTop + int(maxDepth+1)*svgFrameH + svgBottom
	plot := float64(opt.Width - 2*svgPad)
	total := width[0]
	share := func(v int64, of int64) float64 {
		if of == 0 {
			return 0
		}
		return float64(v) / float64(of)
	}

	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, `<?xml version="1.0" standalone="no"?>
<svg version="1.1" width="%d" height="%d" viewBox="0 0 %d %d" xmlns="http://www.w3.org/2000/svg" onload="init(evt)" data-width="%d">
<style type="text/css">
text { font-family: Verdana, sans-serif; font-size: %dpx; fill: rgb(0,0,0); }
#title { text-anchor: middle; font-size: 17px; }
#frames > g { cursor: pointer; }
#frames > g:hover > rect { stroke: black; stroke-width: 0.5; }
.hidden { display: none; }
.parent { opacity: 0.5; }
#search, #unzoom { cursor: pointer; }
</style>
<script type="text/ecmascript"><![CDATA[%s]]></script>
<rect x="0" y="0" width="100%%" height="100%%" fill="rgb(248,248,248)"/>
<text id="title" x="%d" y="24">%s</text>
<text id="subtitle" x="%d" y="42" style="text-anchor: middle">%s</text>
<text id="unzoom" class="hidden" x="%d" y="24">Reset Zoom</text>
<text id="search" x="%d" y="24" style="text-anchor: end">Search</text>
<text id="details" x="%d" y="%d"> </text>
<text id="matched" x="%d" y="%d" style="text-anchor: end"> </text>
<g id="frames">
`, opt.Width, height, opt.Width, height, opt.Width, svgFont, svgScript,
		opt.Width/2, esc(opt.Title), opt.Width/2, esc(g.subtitle()),
		svgPad, opt.Width-svgPad, svgPad, height-10, opt.Width-svgPad, height-10)

	// Each frame is appended to line and written at once: fmt's
	// formatting of the frame's nine numbers was most of the export.
	var line, info []byte
	var scratch bytes.Buffer
	for i := 0; i < n; i++ {
		if width[i] == 0 || g.Depth[i] > maxDepth {
			continue
		}
		wpx := width[i] / total * plot
		if wpx < svgMinPx {
			continue
		}
		xpx := svgPad + x[i]/total*plot
		y := height - svgBottom - int(g.Depth[i]+1)*svgFrameH
		name := g.NameOf(i)
		info = append(info[:0], name...)
		info = append(info, " ("...)
		info = strconv.AppendInt(info, g.TotalN[i], 10)
		info = append(info, " samples, "...)
		info = strconv.AppendFloat(info, 100*share(g.TotalN[i], g.Total), 'f', 2, 64)
		info = append(info, "%)"...)
		if g.BaseN != nil {
			info = append(info, "; base "...)
			info = strconv.AppendInt(info, g.BaseN[i], 10)
			info = append(info, " samples, "...)
			info = strconv.AppendFloat(info, 100*g.baseShare(i), 'f', 2, 64)
			info = append(info, '%')
			if z := Z(g.TotalN[i], g.Total, g.BaseN[i], g.BaseTotal); math.Abs(z) >= SignificantZ {
				info = append(info, "; significant change, z "...)
				info = strconv.AppendFloat(info, z, 'f', 1, 64)
			} else {
				info = append(info, "; no significant change"...)
			}
		}
		if dso := g.Strings[g.DSO[i]]; dso != "" {
			info = append(info, " in "...)
			info = append(info, dso...)
		}
		line = append(line[:0], `<g data-x="`...)
		line = strconv.AppendFloat(line, x[i]/total, 'f', 6, 64)
		line = append(line, `" data-w="`...)
		line = strconv.AppendFloat(line, width[i]/total, 'f', 6, 64)
		line = append(line, `" data-d="`...)
		line = strconv.AppendInt(line, int64(g.Depth[i]), 10)
		line = append(line, `" data-name="`...)
		line = appendEsc(line, name, &scratch)
		line = append(line, `"><title>`...)
		line = appendEsc(line, info, &scratch)
		line = append(line, `</title><rect x="`...)
		line = strconv.AppendFloat(line, xpx, 'f', 1, 64)
		line = append(line, `" y="`...)
		line = strconv.AppendInt(line, int64(y), 10)
		line = append(line, `" width="`...)
		line = strconv.AppendFloat(line, wpx, 'f', 1, 64)
		line = append(line, `" height="`...)
		line = strconv.AppendInt(line, svgFrameH-1, 10)
		line = append(line, `" fill="`...)
		line = g.appendColor(line, i)
		line = append(line, `" rx="2" ry="2"/><text x="`...)
		line = strconv.AppendFloat(line, xpx+3, 'f', 1, 64)
		line = append(line, `" y="`...)
		line = strconv.AppendInt(line, int64(y+svgFrameH-4), 10)
		line = append(line, `">`...)
		line = appendEsc(line, fit(name, wpx), &scratch)
		line = append(line, "</text></g>\n"...)
		bw.Write(line)
	}
	bw.WriteString("</g>\n</svg>\n")
	return bw.Flush()
}

func (g *Graph) subtitle() string {
	if g.c == nil {
		return ""
	}
	t0 := g.c.Profile.T0()
	s := fmt.Sprintf("%s from T0, %d samples", query.DisplayRange(g.Start-t0, g.End-t0), g.Total)
	if g.BaseN != nil {
		s += fmt.Sprintf("; base %s, %d samples", query.DisplayRange(g.BaseStart-t0, g.BaseEnd-t0), g.BaseTotal)
	}
	if q := g.f.Values().Encode(); q != "" {
		s += "; " + q
	}
	return s
}

func (g *Graph) baseShare(i int) float64 {
	if g.BaseTotal == 0 {
		return 0
	}
	return float64(g.BaseN[i]) / float64(g.BaseTotal)
}

// Delta returns how node i's share of its graph changed from the base to
// the target range in a differential graph: TotalN[i]/Total −
// BaseN[i]/BaseTotal, each share 0 when its total is. Positive means grew.
// It is 0 for a graph that is not differential.
func (g *Graph) Delta(i int) float64 {
	if g.BaseN == nil {
		return 0
	}
	share := 0.0
	if g.Total > 0 {
		share = float64(g.TotalN[i]) / float64(g.Total)
	}
	return share - g.baseShare(i)
}

// widths returns each node's width in shares of the graph: TotalN/Total,
// and in a differential graph also the baseline share of the frames below
// that only the baseline has, each drawn at its baseline width (as the
// page's target shape draws them, web/src/flame.ts).
func (g *Graph) widths() []float64 {
	n := g.Len()
	w := make([]float64, n)
	frac := func(v, of int64) float64 {
		if of == 0 {
			return 0
		}
		return float64(v) / float64(of)
	}
	for i := 0; i < n; i++ {
		w[i] = frac(g.TotalN[i], g.Total)
		if g.BaseN != nil && g.TotalN[i] == 0 && i > 0 {
			w[i] = frac(g.BaseN[i], g.BaseTotal)
		}
	}
	if g.BaseN == nil {
		return w
	}
	extra := make([]float64, n)
	for i := n - 1; i > 0; i-- {
		p := g.Parent[i]
		switch {
		case g.TotalN[i] > 0:
			w[i] += extra[i]
			extra[p] += extra[i]
		case p == 0 || g.TotalN[p] > 0:
			extra[p] += w[i]
		}
	}
	w[0] += extra[0]
	return w
}

// appendColor appends frame i's fill: flamegraph.pl's "hot" palette by
// name, orange-tinted for kernel frames, green for JIT, grey for commands;
// in a differential graph red for growth and blue for shrinkage, deeper the
// more significant the change (see Intensity), near-white where it is not
// significant.
func (g *Graph) appendColor(b []byte, i int) []byte {
	rgb := func(r, gr, bl int) []byte {
		b = append(b, "rgb("...)
		b = strconv.AppendInt(b, int64(r), 10)
		b = append(b, ',')
		b = strconv.AppendInt(b, int64(gr), 10)
		b = append(b, ',')
		b = strconv.AppendInt(b, int64(bl), 10)
		return append(b, ')')
	}
	if g.BaseN != nil {
		z := Z(g.TotalN[i], g.Total, g.BaseN[i], g.BaseTotal)
		v := int(250 - 195*Intensity(z))
		switch {
		case i > 0 && v < 250 && z > 0:
			return rgb(255, v, v)
		case i > 0 && v < 250 && z < 0:
			return rgb(v, v, 255)
		}
		return rgb(245, 245, 245)
	}
	h := fnv.New32a()
	io.WriteString(h, g.NameOf(i))
	v := h.Sum32()
	v1, v2, v3 := float64(v&0xff)/255, float64(v>>8&0xff)/255, float64(v>>16&0xff)/255
	switch g.Kind[i] {
	case KindRoot, KindComm:
		return rgb(180+int(40*v1), 180+int(40*v1), 190+int(40*v1))
	case int32(subsecond.KindKernel):
		return rgb(220+int(35*v1), 120+int(60*v2), int(40*v3))
	case int32(subsecond.KindJIT):
		return rgb(50+int(60*v1), 190+int(60*v2), 50+int(60*v3))
	}
	return rgb(205+int(50*v1), int(230*v2), int(55*v3))
}

// fit truncates name to what fits in wpx pixels, with "..", or "" when
// fewer than three characters fit.
func fit(name string, wpx float64) string {
	chars := int((wpx - 6) / svgCharPx)
	if chars < 3 {
		return ""
	}
	r := []rune(name)
	if len(r) <= chars {
		return name
	}
	return string(r[:chars-2]) + ".."
}

// esc XML-escapes s for text and attribute values; characters XML cannot
// carry become U+FFFD.
func esc(s string) string {
	var b strings.Builder
	xml.EscapeText(&b, []byte(s))
	return b.String()
}

// appendEsc appends s escaped as esc does: as it is when it is printable
// ASCII with nothing to escape, as almost every name is, else through
// xml.EscapeText in scratch.
func appendEsc[T string | []byte](b []byte, s T, scratch *bytes.Buffer) []byte {
	plain := true
	for i := 0; i < len(s) && plain; i++ {
		c := s[i]
		plain = c >= 0x20 && c < 0x7f && c != '"' && c != '\'' && c != '&' && c != '<' && c != '>'
	}
	if plain {
		return append(b, s...)
	}
	scratch.Reset()
	xml.EscapeText(scratch, []byte(s))
	return append(b, scratch.Bytes()...)
}

// svgScript is the SVG's behaviour: hover details, click-zoom, search.
// Names reach the page only as text nodes and attributes.
const svgScript = `
"use strict";
var svg, frames, details, matched, unzoomBtn, searchBtn, W, PAD = 10, CHAR = 12 * 0.59, searching = null;
function init(evt) {
	svg = document.documentElement;
	W = +svg.getAttribute("data-width");
	frames = document.getElementById("frames");
	details = document.getElementById("details");
	matched = document.getElementById("matched");
	unzoomBtn = document.getElementById("unzoom");
	searchBtn = document.getElementById("search");
	frames.addEventListener("click", function (e) { var g = frameOf(e.target); if (g) zoom(g); });
	frames.addEventListener("mouseover", function (e) {
		var g = frameOf(e.target);
		if (g) details.textContent = g.querySelector("title").textContent;
	});
	frames.addEventListener("mouseout", function () { details.textContent = " "; });
	unzoomBtn.addEventListener("click", unzoom);
	searchBtn.addEventListener("click", function () { if (searching) resetSearch(); else search(); });
	window.addEventListener("keydown", function (e) {
		if (e.keyCode === 114 || ((e.ctrlKey || e.metaKey) && e.keyCode === 70)) { e.preventDefault(); search(); }
	});
}
function frameOf(el) {
	while (el && el !== frames) {
		if (el.getAttribute && el.hasAttribute("data-x")) return el;
		el = el.parentNode;
	}
	return null;
}
function all() { return frames.querySelectorAll("g[data-x]"); }
function num(g, a) { return +g.getAttribute(a); }
function place(g, x, w) {
	var r = g.querySelector("rect"), t = g.querySelector("text");
	var px = PAD + x * (W - 2 * PAD), pw = w * (W - 2 * PAD);
	r.setAttribute("x", px.toFixed(1));
	r.setAttribute("width", pw.toFixed(1));
	t.setAttribute("x", (px + 3).toFixed(1));
	var name = g.getAttribute("data-name"), n = Math.floor((pw - 6) / CHAR);
	t.textContent = n < 3 ? "" : (name.length <= n ? name : name.slice(0, n - 2) + "..");
}
function zoom(z) {
	var x0 = num(z, "data-x"), w0 = num(z, "data-w"), d0 = num(z, "data-d"), eps = 1e-9;
	all().forEach(function (g) {
		var x = num(g, "data-x"), w = num(g, "data-w"), d = num(g, "data-d");
		g.classList.remove("hidden", "parent");
		if (d < d0 && x <= x0 + eps && x + w >= x0 + w0 - eps) {
			g.classList.add("parent");
			place(g, 0, 1);
		} else if (d >= d0 && x >= x0 - eps && x + w <= x0 + w0 + eps) {
			place(g, (x - x0) / w0, w / w0);
		} else {
			g.classList.add("hidden");
		}
	});
	unzoomBtn.classList.remove("hidden");
}
function unzoom() {
	all().forEach(function (g) {
		g.classList.remove("hidden", "parent");
		place(g, num(g, "data-x"), num(g, "data-w"));
	});
	unzoomBtn.classList.add("hidden");
}
function search() {
	var term = prompt("Search for (regular expression):", "");
	if (term === null || term === "") return;
	var re;
	try { re = new RegExp(term); } catch (e) { alert("Bad regular expression: " + e.message); return; }
	searching = term;
	var spans = [];
	all().forEach(function (g) {
		var r = g.querySelector("rect");
		if (!r.hasAttribute("data-fill")) r.setAttribute("data-fill", r.getAttribute("fill"));
		if (re.test(g.getAttribute("data-name"))) {
			r.setAttribute("fill", "rgb(230,0,230)");
			spans.push([num(g, "data-x"), num(g, "data-x") + num(g, "data-w")]);
		} else {
			r.setAttribute("fill", r.getAttribute("data-fill"));
		}
	});
	spans.sort(function (a, b) { return a[0] - b[0]; });
	var sum = 0, end = -1;
	spans.forEach(function (s) {
		if (s[1] <= end) return;
		sum += s[1] - Math.max(s[0], end);
		end = s[1];
	});
	searchBtn.textContent = "Reset Search";
	matched.textContent = "Matched: " + (100 * sum).toFixed(1) + "%";
}
function resetSearch() {
	all().forEach(function (g) {
		var r = g.querySelector("rect");
		if (r.hasAttribute("data-fill")) r.setAttribute("fill", r.getAttribute("data-fill"));
	});
	searching = null;
	searchBtn.textContent = "Search";
	matched.textContent = " ";
}
`
