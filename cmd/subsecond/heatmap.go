package main

import (
	"context"
	"errors"
)

// TODO(owner of this command): replace this placeholder.
func runHeatmap(ctx context.Context, e env) error { return errors.New("heatmap: not implemented yet") }
