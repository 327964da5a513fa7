package main

import (
	"context"
	"errors"
)

// TODO(owner of this command): replace this placeholder.
func runFlamegraph(ctx context.Context, e env) error { return errors.New("flamegraph: not implemented yet") }
