package main

import (
	"context"
	"errors"
)

// TODO(owner of this command): replace this placeholder.
func runImport(ctx context.Context, e env) error { return errors.New("import: not implemented yet") }
