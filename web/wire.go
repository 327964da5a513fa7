package web

import "github.com/subsecond/subsecond"

// HotspotList is the answer of GET /api/profiles/{id}/hotspots and what
// `subsecond hotspots --format json` prints: the report and What, the sentence
// the profile page heads the list with ("≥ 70% busy for 1 s or more",
// "… in [5, 10) s" for a range), so that the page need not compose it.
type HotspotList struct {
	*subsecond.HotspotReport
	What string `json:"what"`
}

// NewHotspotList returns r with the sentence saying what its episodes are
// and where they were looked for.
func NewHotspotList(r *subsecond.HotspotReport) HotspotList {
	return HotspotList{r, HotspotsWhat(r.Measure, r.Threshold, r.Min) + HotspotsWhere(r.T0, r.Start, r.End)}
}
