package flame

import (
	"encoding/json"
	"io"
)

// WriteJSON writes g in the JSON shape of the package doc.
func (g *Graph) WriteJSON(w io.Writer) error {
	if g.BaseN != nil {
		// base_total is written even when 0, which omitempty would drop.
		return json.NewEncoder(w).Encode(struct {
			*Graph
			BaseTotal int64 `json:"base_total"`
		}{g, g.BaseTotal})
	}
	return json.NewEncoder(w).Encode(g)
}
