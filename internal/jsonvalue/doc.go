// Package jsonvalue compares the values inside unstructured objects as JSON values: the one
// equality that sync's status writes and override's test operation and retained fields share.
// Empty is what an omitempty field drops, for sync's drift check and the fake's stored form.
// It imports nothing from the module.
package jsonvalue
