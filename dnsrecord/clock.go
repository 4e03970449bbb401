package dnsrecord

import (
	"context"
	"errors"
	"fmt"

	"github.com/fedkit/fedkit/internal/loop"
)

// errReadTimeout is the cause of a member read's context when Options.ReadTimeout ran out.
var errReadTimeout = errors.New("dnsrecord: member read timed out")

// bounded runs one member read under Options.ReadTimeout; a read cut short by it says so.
func bounded[T any](ctx context.Context, c *Controller, read func(ctx context.Context) (T, error)) (T, error) {
	rctx, cancel := loop.WithTimeout(ctx, c.opts.Clock, c.opts.ReadTimeout, errReadTimeout)
	defer cancel()
	v, err := read(rctx)
	if err != nil && errors.Is(context.Cause(rctx), errReadTimeout) && ctx.Err() == nil {
		err = fmt.Errorf("%w after %s: %w", errReadTimeout, c.opts.ReadTimeout, err)
	}
	return v, err
}
