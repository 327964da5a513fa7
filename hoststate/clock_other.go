//go:build !linux

package hoststate

import "errors"

// realtimeOffset is Linux's only: /dev/kmsg is.
func realtimeOffset() (int64, error) { return 0, errors.ErrUnsupported }
