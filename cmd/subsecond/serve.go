package main

import (
	"context"
	"errors"
)

// TODO(owner of this command): replace this placeholder.
func runServe(ctx context.Context, e env) error { return errors.New("serve: not implemented yet") }
