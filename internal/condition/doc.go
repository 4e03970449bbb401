// Package condition holds what every fedkit loop does the same way with the conditions it
// writes on federated objects and records: setting one while keeping its transition time, and
// bounding its message.
package condition
