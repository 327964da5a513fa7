package main

import (
	"context"
	"errors"
)

// TODO(owner of this command): replace this placeholder.
func runInfo(ctx context.Context, e env) error { return errors.New("info: not implemented yet") }
