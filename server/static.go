package server

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"net/http"
	"net/url"
	"path"
	"sort"
	"strings"
	"time"

	"github.com/subsecond/subsecond"
)

// assets serves the embedded front-end files. Each file's URL carries a hash
// of its content (?v=…): a request with the current hash may be cached for a
// year; any other is revalidated with the hash as ETag.
type assets struct {
	files map[string][]byte
	hash  map[string]string
}

func newAssets(fsys fs.FS) *assets {
	a := &assets{files: map[string][]byte{}, hash: map[string]string{}}
	_ = fs.WalkDir(fsys, ".", func(name string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || strings.HasPrefix(path.Base(name), ".") {
			return nil
		}
		b, err := fs.ReadFile(fsys, name)
		if err != nil {
			return nil
		}
		sum := sha256.Sum256(b)
		a.files[name] = b
		a.hash[name] = hex.EncodeToString(sum[:8])
		return nil
	})
	return a
}

// url returns the versioned URL of the asset name.
func (a *assets) url(name string) string {
	u := "/static/" + name
	if h, ok := a.hash[name]; ok {
		u += "?v=" + h
	}
	return u
}

// static handles GET /static/*: the embedded front-end assets.
func (s *Server) static(w http.ResponseWriter, r *http.Request) {
	name := strings.TrimPrefix(r.URL.Path, "/static/")
	b, ok := s.assets.files[name]
	if !ok {
		s.error(w, r, errorf(subsecond.ErrNotFound, "no such asset"))
		return
	}
	h := s.assets.hash[name]
	w.Header().Set("ETag", `"`+h+`"`)
	if r.URL.Query().Get("v") == h {
		w.Header().Set("Cache-Control", "public, max-age=31536000, immutable")
	} else {
		w.Header().Set("Cache-Control", "no-cache")
	}
	http.ServeContent(w, r, name, time.Time{}, bytes.NewReader(b))
}

func sortedKeys(v url.Values) []string {
	keys := make([]string, 0, len(v))
	for k := range v {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
