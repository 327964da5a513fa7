package main

import (
	"context"
	"errors"
)

// TODO(owner of this command): replace this placeholder.
func runHotspots(ctx context.Context, e env) error { return errors.New("hotspots: not implemented yet") }
