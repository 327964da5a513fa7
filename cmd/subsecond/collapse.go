package main

import (
	"context"
	"errors"
)

// TODO(owner of this command): replace this placeholder.
func runCollapse(ctx context.Context, e env) error { return errors.New("collapse: not implemented yet") }
