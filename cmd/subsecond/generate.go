package main

import (
	"context"
	"errors"
)

// TODO(owner of this command): replace this placeholder.
func runGenerate(ctx context.Context, e env) error { return errors.New("generate: not implemented yet") }
