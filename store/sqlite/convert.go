package sqlite

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/subsecond/subsecond"
	"github.com/subsecond/subsecond/store"
	"github.com/subsecond/subsecond/store/sqldb"
)

// convert rewrites every profile stored one row per sample (the schema
// before migration 0004) as chunks and table segments, one transaction per
// profile, so that an interrupted upgrade resumes where it stopped and
// never leaves a profile half converted. progress, when set, is called
// after each profile with the samples converted so far and in all.
func (b *Backend) convert(ctx context.Context, progress func(done, total int64)) error {
	type todo struct {
		pk, samples int64
		id          string
	}
	var list []todo
	rows, err := b.db.QueryContext(ctx, `SELECT pk, id, samples FROM profiles
		WHERE NOT EXISTS (SELECT 1 FROM chunks WHERE chunks.profile = profiles.pk) ORDER BY pk`)
	if err != nil {
		return fmt.Errorf("convert profiles: %w", err)
	}
	var total int64
	for rows.Next() {
		var t todo
		if err := rows.Scan(&t.pk, &t.id, &t.samples); err != nil {
			rows.Close()
			return fmt.Errorf("convert profiles: %w", err)
		}
		list = append(list, t)
		total += t.samples
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("convert profiles: %w", err)
	}
	var done int64
	for _, t := range list {
		if err := b.convertOne(ctx, t.pk); err != nil {
			return fmt.Errorf("convert profile %s to chunks: %w", t.id, err)
		}
		done += t.samples
		if progress != nil {
			progress(done, total)
		}
	}
	return nil
}

func (b *Backend) convertOne(ctx context.Context, pk int64) error {
	return b.writeTx(ctx, func(tx *sql.Tx) error {
		c, err := readRows(ctx, b.DB, tx, pk)
		if err != nil {
			return err
		}
		segs, chunks, comms := store.Encode(c)
		if err := insertSegments(ctx, tx, pk, segs); err != nil {
			return err
		}
		if err := insertChunks(ctx, tx, pk, chunks); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE profiles SET comms = ?, time_base = 0 WHERE pk = ?`, comms, pk); err != nil {
			return err
		}
		for _, t := range []string{"samples", "stack_nodes", "frames", "strings"} {
			if _, err := tx.ExecContext(ctx, `DELETE FROM `+t+` WHERE profile = ?`, pk); err != nil {
				return err
			}
		}
		return nil
	})
}

// readRows reads a profile stored one row per sample into a Capture's
// tables and columns, as versions before chunks loaded it: samples in
// (t, seq) order, times relative to time_base, a weight of 0 standing for
// the event's period.
func readRows(ctx context.Context, d *sqldb.DB, tx *sql.Tx, pk int64) (*subsecond.Capture, error) {
	var base, want int64
	if err := tx.QueryRowContext(ctx, `SELECT time_base, samples FROM profiles WHERE pk = ?`, pk).Scan(&base, &want); err != nil {
		return nil, err
	}
	var periods []uint64
	err := d.Each(ctx, tx, `SELECT period FROM events WHERE profile = ? ORDER BY idx`, []any{pk}, func(sc func(...any) error) error {
		var p int64
		err := sc(&p)
		periods = append(periods, uint64(p))
		return err
	})
	if err != nil {
		return nil, err
	}
	c := &subsecond.Capture{Strings: []string{""}, Nodes: []subsecond.StackNode{{Parent: -1, Frame: -1}}}
	err = d.Each(ctx, tx, `SELECT idx, s FROM strings WHERE profile = ? ORDER BY idx`, []any{pk}, func(sc func(...any) error) error {
		var idx int64
		var s string
		if err := sc(&idx, &s); err != nil {
			return err
		}
		if idx != int64(len(c.Strings)) {
			return fmt.Errorf("strings table has a gap at %d", len(c.Strings))
		}
		c.Strings = append(c.Strings, s)
		return nil
	})
	if err != nil {
		return nil, err
	}
	ns := int64(len(c.Strings))
	err = d.Each(ctx, tx, `SELECT idx, symbol, dso, srcline, addr, kind, inline FROM frames WHERE profile = ? ORDER BY idx`, []any{pk},
		func(sc func(...any) error) error {
			var idx, sym, dso, src, addr, kind, inline int64
			if err := sc(&idx, &sym, &dso, &src, &addr, &kind, &inline); err != nil {
				return err
			}
			if idx != int64(len(c.Frames)) || sym < 0 || sym >= ns || dso < 0 || dso >= ns || src < 0 || src >= ns ||
				kind < 0 || kind > int64(subsecond.KindInlined) {
				return fmt.Errorf("frame %d is inconsistent", idx)
			}
			c.Frames = append(c.Frames, subsecond.FrameRec{Symbol: uint32(sym), DSO: uint32(dso), SrcLine: uint32(src),
				Addr: uint64(addr), Kind: subsecond.FrameKind(kind), Inline: inline != 0})
			return nil
		})
	if err != nil {
		return nil, err
	}
	err = d.Each(ctx, tx, `SELECT idx, parent, frame FROM stack_nodes WHERE profile = ? ORDER BY idx`, []any{pk}, func(sc func(...any) error) error {
		var idx, parent, frame int64
		if err := sc(&idx, &parent, &frame); err != nil {
			return err
		}
		if idx != int64(len(c.Nodes)) || parent < 0 || parent >= idx || frame < 0 || frame >= int64(len(c.Frames)) {
			return fmt.Errorf("stack node %d is inconsistent", idx)
		}
		c.Nodes = append(c.Nodes, subsecond.StackNode{Parent: int32(parent), Frame: int32(frame), Depth: c.Nodes[parent].Depth + 1})
		return nil
	})
	if err != nil {
		return nil, err
	}
	s := &c.Samples
	err = d.Each(ctx, tx, `SELECT t, cpu, pid, tid, comm, event, weight, stack FROM samples WHERE profile = ? ORDER BY t, seq`, []any{pk},
		func(sc func(...any) error) error {
			var t, cpu, pid, tid, comm, ev, w, stack int64
			if err := sc(&t, &cpu, &pid, &tid, &comm, &ev, &w, &stack); err != nil {
				return err
			}
			if comm < 0 || comm >= ns || stack < 0 || stack >= int64(len(c.Nodes)) || ev < 0 || ev >= int64(len(periods)) ||
				cpu != int64(int32(cpu)) || pid != int64(int32(pid)) || tid != int64(int32(tid)) {
				return fmt.Errorf("sample at %d is inconsistent", t)
			}
			if t != subsecond.NoTime {
				t += base
			}
			wt := uint64(w)
			if wt == 0 {
				wt = periods[ev]
			}
			if wt == 0 {
				wt = 1
			}
			s.Time = append(s.Time, t)
			s.CPU = append(s.CPU, int32(cpu))
			s.PID = append(s.PID, int32(pid))
			s.TID = append(s.TID, int32(tid))
			s.Comm = append(s.Comm, uint32(comm))
			s.Event = append(s.Event, uint16(ev))
			s.Weight = append(s.Weight, wt)
			s.Stack = append(s.Stack, int32(stack))
			return nil
		})
	if err != nil {
		return nil, err
	}
	s.Fill() // the columns the old table lacks
	if int64(s.Len()) != want {
		return nil, fmt.Errorf("read %d of %d samples", s.Len(), want)
	}
	return c, nil
}
