package main

import (
	"context"
	"errors"
)

// TODO(owner of this command): replace this placeholder.
func runCPUs(ctx context.Context, e env) error { return errors.New("cpus: not implemented yet") }
