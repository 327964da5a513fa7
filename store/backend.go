package store

import (
	"context"
	"errors"

	"github.com/subsecond/subsecond"
)

// Backend is the database under a Store: SQLite (package store/sqlite) or
// PostgreSQL (package store/postgres). It stores what the import pipeline
// hands it as opaque blobs and never decodes samples; the pipeline, the
// codecs and the capture cache are backend-neutral and live in Store. The
// one blob a backend opens is a series block it must merge with the one it
// holds, through this package's MergeSeriesBlocks.
//
// Every method is one transaction. Lookups of an unknown or malformed id
// return an error wrapping subsecond.ErrNotFound.
type Backend interface {
	// Begin starts the import of profile id. Nothing written through the
	// returned Import is visible to any reader, in this process or
	// another, until its Commit returns nil; Abort, a failed Commit or a
	// process killed meanwhile leaves nothing behind.
	Begin(ctx context.Context, id string) (Import, error)
	// ProfileByDigest returns the stored profile whose text has the given
	// digest (subsecond.Profile.Digest: "blake3:" or "sha256:" and
	// lower-case hex).
	ProfileByDigest(ctx context.Context, digest string) (*subsecond.Profile, error)
	// LegacyDigests reports whether any stored profile is known by its
	// SHA-256 digest alone (stored before BLAKE3 digests; see Digest).
	LegacyDigests(ctx context.Context) (bool, error)
	// List returns the profiles opt selects, most recently imported first,
	// with their event summaries (Profile.EventCount, and the event with
	// most samples alone in Events) but without warning messages. An
	// unknown opt.After is an error wrapping subsecond.ErrNotFound.
	List(ctx context.Context, opt ListOptions) ([]subsecond.Profile, error)
	// HostTotals returns the totals of at most limit hosts (all when 0)
	// whose names follow after in byte order (from the first when ""), by
	// name, each an aggregate over its profiles computed by the database.
	HostTotals(ctx context.Context, after string, limit int) ([]subsecond.HostTotals, error)
	// HostProfiles returns host's profiles as List summarises them, in no
	// particular order.
	HostProfiles(ctx context.Context, host string) ([]subsecond.Profile, error)
	// Profile returns one profile with its events and first warnings.
	Profile(ctx context.Context, id string) (*subsecond.Profile, error)
	// Load returns profile id, its comm list, its table segments and
	// every chunk with its data, in (Second, Seq) order.
	Load(ctx context.Context, id string) (*Stored, error)
	// LoadWindow returns profile id, its comm list, its table segments and
	// the chunks whose Second lies in [from, to] (inclusive), with their
	// data, in (Second, Seq) order.
	LoadWindow(ctx context.Context, id string, from, to int64) (*Stored, error)
	// Chunks returns profile id (without warning messages) with its comm
	// list and the chunks whose Second lies in [from, to] (inclusive), in
	// (Second, Seq) order, but no table segments. With data false the
	// chunks' Data is not read, only their summaries.
	Chunks(ctx context.Context, id string, from, to int64, data bool) (*Stored, error)
	// Rollup returns profile id's encoded rollup (see encodeRollup), nil
	// when it has none (imported before rollups were stored).
	Rollup(ctx context.Context, id string) ([]byte, error)
	// WriteRollup stores b as profile id's encoded rollup, in a
	// transaction of its own, unless it has one already or is not stored.
	WriteRollup(ctx context.Context, id string, b []byte) error
	// Exists reports whether profile id is stored: a cached capture is
	// checked with it, since another process may have deleted it.
	Exists(ctx context.Context, id string) (bool, error)
	// Rename sets profile id's name.
	Rename(ctx context.Context, id, name string) error
	// Delete removes profile id and everything stored with it.
	Delete(ctx context.Context, id string) error
	// AddMarkers stores markers of host, in one transaction, skipping
	// those with the time and text of a stored one, then drops the host's
	// oldest markers (by time, then text in byte order) beyond the newest
	// keep, in the same transaction; it returns how many it stored and how
	// many it dropped. The caller has checked them.
	AddMarkers(ctx context.Context, host string, ms []subsecond.Marker, keep int) (added, dropped int, err error)
	// Markers returns host's markers in [from, to) (Unix ns), ordered by
	// time and text; an empty, non-nil slice when there are none.
	Markers(ctx context.Context, host string, from, to int64) ([]subsecond.Marker, error)
	// AddSeries stores blocks of host's series in one transaction and
	// returns how many points were new. A block whose series and start
	// are stored already is merged with the stored one through
	// MergeSeriesBlocks (the stored value wins at an equal time). The
	// caller has checked the blocks, which have distinct keys and come in
	// the order of (Name, CPU, Label, Start), so that concurrent calls
	// lock stored blocks in one order. When the host would then hold more
	// than keep distinct series, the series new to it are not stored
	// beyond keep, the last in SortSeriesKeys' order first; the answer
	// says how many (subsecond.SeriesAdded).
	AddSeries(ctx context.Context, host string, blocks []SeriesBlock, keep int) (subsecond.SeriesAdded, error)
	// SeriesBlocks returns, in no particular order, the blocks of host's
	// series of kind name that hold a point in [from, to) (Unix ns), with
	// their data; an empty, non-nil slice when there are none.
	SeriesBlocks(ctx context.Context, host, name string, from, to int64) ([]SeriesBlock, error)
	// SeriesPoints returns the points that the blocks SeriesBlocks returns
	// hold, from their summaries, reading none of their data.
	SeriesPoints(ctx context.Context, host, name string, from, to int64) (int64, error)
	// SeriesNames returns, in no particular order, every series stored
	// for host with the times of its first and last points.
	SeriesNames(ctx context.Context, host string) ([]subsecond.SeriesExtent, error)
	// DeleteSeries removes the series blocks of host (of every host when
	// host is "") whose points all lie before before (Unix ns).
	DeleteSeries(ctx context.Context, host string, before int64) error
	// SetHostLabels sets labels of host and removes those whose keys
	// are in remove, in one transaction; when the host would end with
	// more than max labels it stores nothing and returns an error
	// wrapping subsecond.ErrInvalid. The caller has checked the labels.
	SetHostLabels(ctx context.Context, host string, set []subsecond.Label, remove []string, max int) error
	// HostLabels returns the labels set on each host, by key, and each
	// host's newest indexed capture (by Start), without its Slots.
	HostLabels(ctx context.Context) (map[string][]subsecond.Label, map[string]IndexRow, error)
	// HostLabelsOf is HostLabels for the given hosts alone.
	HostLabelsOf(ctx context.Context, hosts []string) (map[string][]subsecond.Label, map[string]IndexRow, error)
	// WriteIndex stores ix as profile id's fleet index, in a transaction
	// of its own, and reports whether it did: not when the profile has an
	// index already or is not stored.
	WriteIndex(ctx context.Context, id string, ix *Index) (bool, error)
	// Unindexed returns the IDs of the stored profiles without a fleet
	// index, oldest import first.
	Unindexed(ctx context.Context) ([]string, error)
	// IndexedCaptures returns the indexed captures with a slot in [from,
	// to) (Unix ns), by host, Start and ID, at most limit of them.
	IndexedCaptures(ctx context.Context, from, to int64, limit int) ([]IndexRow, error)
	// IndexNames returns every name of kind in the fleet index's
	// dictionary, in no particular order.
	IndexNames(ctx context.Context, kind subsecond.NameKind) ([]IndexName, error)
	// IndexCounts returns the rows of the names with the given
	// dictionary IDs in the captures with a slot in [from, to), with their
	// Slots but not their Kind and Name.
	IndexCounts(ctx context.Context, names []int64, from, to int64) ([]CountRow, error)
	// IndexNameBlobs calls fn with the ID, the start of slot 0 and the end
	// of the last slot (Unix ns), and the names blob (EncodeNames) of each
	// capture with a slot in [from, to), one capture at a time, inside one
	// read transaction; an error of fn stops it and is returned.
	IndexNameBlobs(ctx context.Context, from, to int64, fn func(id string, start, end int64, names []byte) error) error
	// DropIndexDays drops the fleet index of the days (of the captures'
	// starts, UTC) that end at or before before (Unix ns) and whose
	// captures all ended before it, where the index is partitioned by
	// day (PostgreSQL), and returns how many days it dropped; elsewhere
	// the index goes with its profiles (0).
	DropIndexDays(ctx context.Context, before int64) (int, error)
	// Ready checks that the database answers a trivial query and that
	// its schema is the one this build's migrations make; an older or
	// newer schema is an error wrapping subsecond.ErrUnavailable.
	Ready(ctx context.Context) error
	// Unavailable reports whether err, returned by one of the backend's
	// methods, means that the database is unreachable or restarting (or,
	// for SQLite, locked beyond the busy timeout), so that the request
	// may succeed when retried. Store wraps such errors with
	// subsecond.ErrUnavailable.
	Unavailable(err error) bool
	// Close releases the database.
	Close() error
}

// ListOptions select a page of the profile list, most recently imported
// first: at most Limit profiles (all when 0) from the one after profile
// After (from the first when "").
type ListOptions struct {
	Limit int
	After string
}

// Import writes one profile inside a transaction of its own (see
// Backend.Begin). Its methods are called from one goroutine.
type Import interface {
	// WriteSegments stores table segments of the profile.
	WriteSegments(ctx context.Context, segs []Segment) error
	// WriteChunks stores chunks of the profile.
	WriteChunks(ctx context.Context, chunks []Chunk) error
	// Commit stores the profile row and its host's labels, and makes the
	// import visible. When a profile with the same digest exists already
	// it stores nothing and returns an error wrapping ErrDuplicate.
	Commit(ctx context.Context, rec *Record) error
	// Abort discards the import; after Commit it does nothing.
	Abort() error
}

// ErrDuplicate is returned by Import.Commit when a profile with the same
// content exists already.
var ErrDuplicate = errors.New("a profile with the same content exists")

// Record is what Import.Commit stores in the profile row, besides the
// segments and chunks: the profile itself (with ID, Digest, Uploaded,
// Events and WarningList set) and the list of command names that chunk
// summaries refer to; and, in the same transaction, the profile's rollup
// and labels of its host.
type Record struct {
	Profile subsecond.Profile
	Comms   []byte // encoded comm list (see encodeStrings)
	// Rollup is the profile's encoded rollup (see encodeRollup).
	Rollup []byte
	// Labels are set on the profile's host, which ends with at most
	// MaxLabels of them (else Commit fails with an error wrapping
	// subsecond.ErrInvalid); the caller has checked them.
	Labels    []subsecond.Label
	MaxLabels int
}

// Index is a profile's fleet index as a Backend stores it: a row of the
// capture's place on the wall clock with its slot totals, and a row per
// name.
type Index struct {
	Day      int64 // floor(Start / 1 day): the partition it is filed in
	Host     string
	Start    int64 // Unix ns of the start of slot 0
	End      int64 // Unix ns of the end of the last slot
	Boot     int64 // Unix ns the host booted, 0 when unknown
	Kernel   string
	CPUModel string
	CPUs     int
	Slots    []byte // encoded slot totals (see encodeSlotTotals)
	// Counts are sorted by kind and name.
	Counts []IndexCount
}

// IndexCount is one name's samples in one capture of the fleet index.
type IndexCount struct {
	Kind  subsecond.NameKind
	Name  string
	Total int64
	Slots []byte // encoded per-slot counts (see appendSlotCounts)
}

// IndexRow is an indexed capture as a Backend reads it.
type IndexRow struct {
	ID               string
	Host             string
	Start, End, Boot int64
	Kernel, CPUModel string
	CPUs             int
	Slots            []byte
}

// IndexName is a name of the fleet index's dictionary.
type IndexName struct {
	ID   int64
	Name string
}

// CountRow is a name's row of one capture as a Backend reads it.
type CountRow struct {
	Capture string
	NameID  int64
	Kind    subsecond.NameKind
	Name    string
	Total   int64
	Slots   []byte
}

// Stored is a profile as Backend.Load reads it.
type Stored struct {
	Profile  subsecond.Profile
	Comms    []byte
	Segments []Segment
	Chunks   []Chunk
}

// Chunk is one stored chunk: the samples of profile whose times lie in one
// second (see subsecond.ChunkSpan), as columns in one compressed blob, and
// their summary. Samples of a second normally form one chunk with Seq 0;
// input far out of time order yields further chunks of the same second
// with Seq 1, 2, … holding samples read later.
type Chunk struct {
	Second  int64  // floor(t / 1 s); math.MinInt64/1e9 rounded down for samples without a time
	Seq     int32  // order among the chunks of one second
	Samples int32  // samples in the chunk
	Summary []byte // encoded subsecond.ChunkSummary counts (see encodeSummary)
	Data    []byte // encoded sample columns (see encodeChunk); nil when not read
}

// SeriesBlock is one stored block of a host's series: the points of the
// series named by Name, CPU and Label whose times lie in [Start, Start +
// SeriesBlockSpan), in one blob (see encodeSeries), and their summary,
// which lanes read without decoding the points.
type SeriesBlock struct {
	Name  string
	CPU   int32
	Label string
	Start int64 // a multiple of SeriesBlockSpan, Unix ns
	First int64 // time of the first point
	Last  int64 // time of the last point
	// Points is the number of points; Min, Max and Sum are of their
	// values as stored.
	Points        int32
	Min, Max, Sum float64
	Data          []byte
}

// Segment is a piece of a profile's interned tables (strings, frames or
// stack nodes), appended in Seq order per Kind.
type Segment struct {
	Kind SegmentKind
	Seq  int32
	Data []byte
}

// SegmentKind names the table a Segment belongs to.
type SegmentKind int32

// Segment kinds, as stored. Imports store SegPacked rows, each a run of
// segments of the other kinds (see packSegments); profiles stored before
// hold those kinds' rows.
const (
	SegStrings SegmentKind = 1
	SegFrames  SegmentKind = 2
	SegNodes   SegmentKind = 3
	SegPacked  SegmentKind = 4
)

// ValidID reports whether id has the shape of a profile ID (26 lower-case
// base32 characters), so that backends refuse hostile IDs before they reach
// SQL.
func ValidID(id string) bool {
	if len(id) != 26 {
		return false
	}
	for _, c := range id {
		if !(c >= 'a' && c <= 'z' || c >= '2' && c <= '7') {
			return false
		}
	}
	return true
}
