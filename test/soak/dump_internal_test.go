package soak

import (
	"os"
	"testing"

	"sigs.k8s.io/yaml"
)

// dumpFor returns a violation-sized YAML dump of the federated object named by SOAK_DUMP
// ("namespace/name"), for debugging a seed.
func init() { dumpHook = dumpYAML }

func dumpYAML(key string, obj any) string {
	if os.Getenv("SOAK_DUMP") != key {
		return ""
	}
	b, _ := yaml.Marshal(obj)
	return string(b)
}

var _ = testing.Short
