package server

import (
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/subsecond/subsecond"
	"github.com/subsecond/subsecond/link"
	"github.com/subsecond/subsecond/query"
)

// maxField bounds the small multipart fields (name, token) read before the
// file part.
const maxField = 4 << 10

// maxName bounds a profile's name.
const maxName = 256

// authBound bounds the bytes of a form read before its token field
// authorises the upload.
const authBound = 64 << 10

// createProfile handles POST /api/profiles?name=&host=&label=&boot=: a
// capture as a raw
// body or as the multipart field "file" (optionally preceded by fields
// "name", "host" and "token"), plain, gzip or zstd (detected from the content). The upload
// streams into the store; nothing is buffered whole. Answers 201
// {"profile", "url", "existed": false}, or 200 with "existed": true when the
// same capture was stored before (the stored profile, under the name it
// was stored with); a browser form post without script is redirected to the
// profile page, and a client asking for text/plain gets the link on one
// line, followed, when the capture was stored before, by a line saying so.
//
// Each label=key=value (repeated, as the query table reads label) is set
// on the host with the capture, and boot, the Unix time the host booted
// (Unix seconds or RFC 3339, as from takes), gives the fleet's uptimes.
//
// Nothing is read of a body whose declared Content-Length is over the
// upload limit: it gets 413 at once (and a client that sent Expect:
// 100-continue gets it instead of "100 Continue"). When the server has a
// token, it comes in the Authorization header or as the form's field
// "token", before the file part and within the form's first authBound
// bytes; a form that has not sent it by then is refused with 401 after
// reading at most authBound bytes.
func (s *Server) createProfile(w http.ResponseWriter, r *http.Request) {
	if s.readOnly {
		s.error(w, r, errReadOnly)
		return
	}
	switch enc := strings.ToLower(strings.TrimSpace(r.Header.Get("Content-Encoding"))); enc {
	case "", "identity", "gzip", "x-gzip", "zstd":
		// The store recognises gzip and zstd by their first bytes.
	default:
		s.error(w, r, errorf(errEncoding, "Content-Encoding %q is not supported: send plain, gzip or zstd", enc))
		return
	}
	if r.ContentLength > s.maxUpload {
		s.error(w, r, fmt.Errorf("the upload's declared size of %d bytes is larger than this server's limit of %d bytes (--max-upload); nothing was read: %w",
			r.ContentLength, s.maxUpload, subsecond.ErrTooLarge))
		return
	}
	release, err := s.uploads.enter(s.hosts.client(r))
	if err != nil {
		s.error(w, r, err)
		return
	}
	defer release()
	// Authorise before reading the body when the token is not in the form,
	// and extend the deadlines only for an authorised upload: until then
	// the client has authWait to send the form's fields.
	authorized := false
	if s.token == "" || r.Header.Get("Authorization") != "" {
		if err := s.authorize(r, ""); err != nil {
			s.error(w, r, err)
			return
		}
		authorized = true
	}
	wait := s.authWait
	if authorized {
		wait = s.uploadTTL
	}
	limited := s.newUploadBody(w, r, wait)
	defer limited.stop()
	up := Upload{Name: r.URL.Query().Get("name"), Host: r.URL.Query().Get("host")}
	if up.Labels, up.Boot, err = uploadLabels(r.URL.Query()); err != nil {
		s.error(w, r, err)
		return
	}
	var body io.Reader = limited
	var formToken string
	mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if mt == "multipart/form-data" {
		g := &authGate{r: limited, left: authBound, open: authorized}
		r.Body = io.NopCloser(g)
		mr, err := r.MultipartReader()
		if err != nil {
			s.error(w, r, fmt.Errorf("file: malformed multipart body: %w", subsecond.ErrInvalid))
			return
		}
		body = nil
		for body == nil {
			part, err := mr.NextPart()
			if err == io.EOF {
				s.error(w, r, fmt.Errorf("file: the form has no file field: %w", subsecond.ErrInvalid))
				return
			}
			if err != nil {
				s.error(w, r, g.cause(uploadError(limited, fmt.Errorf("file: malformed multipart body: %w", subsecond.ErrInvalid))))
				return
			}
			switch part.FormName() {
			case "file":
				body = part
				up.FileName = part.FileName()
			case "name", "token", "host":
				b, err := io.ReadAll(io.LimitReader(part, maxField+1))
				if err != nil || len(b) > maxField {
					s.error(w, r, g.cause(uploadError(limited, fmt.Errorf("%s: field longer than %d bytes: %w", part.FormName(), maxField, subsecond.ErrInvalid))))
					return
				}
				switch v := strings.TrimSpace(string(b)); {
				case part.FormName() == "token":
					formToken = string(b)
					if !authorized {
						if err := s.authorize(r, formToken); err != nil {
							s.error(w, r, err)
							return
						}
						authorized = true
						g.open = true
						limited.setDeadline(s.uploadTTL)
					}
				case v == "":
				case part.FormName() == "host":
					up.Host = v
				default:
					up.Name = v
				}
			}
		}
	} else if r.ContentLength > 0 {
		up.Size = r.ContentLength
	}
	if !authorized {
		if err := s.authorize(r, formToken); err != nil {
			s.error(w, r, err)
			return
		}
		limited.setDeadline(s.uploadTTL)
	}
	if up.Host != "" {
		if err := query.CheckHost(up.Host); err != nil {
			s.error(w, r, err)
			return
		}
	}
	if len(up.Name) > maxName {
		s.error(w, r, fmt.Errorf("name: longer than %d bytes: %w", maxName, subsecond.ErrInvalid))
		return
	}
	if up.Name == "" {
		up.Name = strings.TrimSuffix(strings.TrimSuffix(strings.TrimSuffix(up.FileName, ".gz"), ".zst"), ".txt")
	}
	// The store decompresses once, by content, and counts every byte of
	// text against the limit, a compressed stream inside included.
	up.MaxText = s.maxText
	// Imports run a few at a time (Config.MaxImports), so that they leave
	// the views cores of their own; an import waiting on its client lends
	// its slot meanwhile (see slotBody).
	slot, err := s.enterImport(r.Context())
	if err != nil {
		s.error(w, r, err)
		return
	}
	sb := &slotBody{r: body, s: s, ctx: r.Context(), held: true, release: slot}
	defer sb.done()
	up.Pause = s.pauseImport
	start := time.Now()
	p, existed, err := s.store.Import(r.Context(), sb, up)
	s.metrics.imported(limited.read(), time.Since(start), p, existed, err)
	if err != nil {
		s.error(w, r, uploadError(limited, err))
		return
	}
	code := http.StatusCreated
	if existed {
		code = http.StatusOK
	}
	noteProfile(r, p.ID)
	page := link.ProfilePage.Path(p.ID)
	abs := s.baseURL(r) + page
	accept := r.Header.Get("Accept")
	switch {
	case strings.Contains(accept, "application/json"):
	case strings.Contains(accept, "text/html"):
		http.Redirect(w, r, page, http.StatusSeeOther)
		return
	case strings.Contains(accept, "text/plain"):
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Header().Set("Location", abs)
		w.WriteHeader(code)
		fmt.Fprintln(w, abs)
		if existed {
			fmt.Fprintf(w, "already stored as %q (uploaded %s); not stored again\n", displayName(p), p.Uploaded.UTC().Format(time.RFC3339))
		}
		return
	}
	w.Header().Set("Location", abs)
	s.json(w, code, created{URL: abs, Existed: existed, Profile: p})
}

// authGate passes at most left bytes of an unauthorised form, then fails its
// reads, until open lifts the bound once the form's token authorised it.
type authGate struct {
	r    io.Reader
	left int64
	open bool
	shut bool // a read went past the bound
}

// errGated is what an authGate's read past its bound returns.
var errGated = errors.New("form read past its bound before its token")

func (g *authGate) Read(p []byte) (int, error) {
	if g.open {
		return g.r.Read(p)
	}
	if g.left <= 0 {
		g.shut = true
		return 0, errGated
	}
	if int64(len(p)) > g.left {
		p = p[:g.left]
	}
	n, err := g.r.Read(p)
	g.left -= int64(n)
	return n, err
}

// cause returns 401 for a form that went past the bound without its token;
// else err.
func (g *authGate) cause(err error) error {
	if g.shut {
		return errorf(subsecond.ErrUnauthorized, "this server needs a token: send Authorization: Bearer TOKEN, or the form's token field before its file and within its first %d KiB", authBound>>10)
	}
	return err
}

// created is the answer to an upload; the link comes first so that it is
// the first thing a terminal shows.
type created struct {
	URL     string             `json:"url"`
	Existed bool               `json:"existed"`
	Profile *subsecond.Profile `json:"profile"`
}

// uploadError reports an upload that went past the size limit or the time
// limits, or whose body broke off, as such, whatever error the reader's
// consumer wrapped it in.
func uploadError(b *uploadBody, err error) error {
	if c := b.cause(err); c != err {
		return c
	}
	return err
}

// uploadLabels reads an upload's label and boot parameters: the labels
// as the query table reads them, and boot as a wall-clock time (0 when
// absent).
func uploadLabels(v url.Values) ([]subsecond.Label, int64, error) {
	q, err := query.Parse(url.Values{"label": v["label"]})
	if err != nil {
		return nil, 0, err
	}
	var boot int64
	if b := v.Get("boot"); b != "" {
		if boot, err = query.ParseWallTime("boot", b); err != nil {
			return nil, 0, err
		}
	}
	return q.Labels, boot, nil
}
