package main

import (
	"context"
	"errors"
)

// TODO(owner of this command): replace this placeholder.
func runList(ctx context.Context, e env) error { return errors.New("list: not implemented yet") }
