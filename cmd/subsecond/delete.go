package main

import (
	"context"
	"errors"
)

// TODO(owner of this command): replace this placeholder.
func runDelete(ctx context.Context, e env) error { return errors.New("delete: not implemented yet") }
