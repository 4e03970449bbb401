package federation

import "context"

// An API server answers some requests with warnings, as HTTP Warning headers (code 299): a
// field it dropped from the object (its field validation "Warn", the default:
// `unknown field "spec.x"`), a deprecated API version. A loop that writes to a member wants
// them in the object's status, not only in a log, so a request's context carries a handler
// for them.

// warningHandlerKey is the context key of a request's warning handler.
type warningHandlerKey struct{}

// WithWarningHandler returns a copy of ctx whose requests through a [ClusterClient] hand
// every warning of their answers to h, in the order the answer lists them, on the goroutine
// that made the request. It replaces a handler ctx already had. federation/kube and fake both
// call it; a client that does not call it (a custom ClusterClient) loses nothing else.
func WithWarningHandler(ctx context.Context, h func(warning string)) context.Context {
	return context.WithValue(ctx, warningHandlerKey{}, h)
}

// HandleWarning hands warning to the handler [WithWarningHandler] set on ctx, if any.
// ClusterClient implementations call it for every warning of an answer to a request made
// with ctx.
func HandleWarning(ctx context.Context, warning string) {
	if h, ok := ctx.Value(warningHandlerKey{}).(func(string)); ok && h != nil {
		h(warning)
	}
}
