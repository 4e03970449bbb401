package sync

import "github.com/fedkit/fedkit/federation"

// RevisionNameOf is the name the Syncer gives the ControllerRevision of obj's current spec,
// for the rollout stories (rollout_scenario_test.go) to name their history as it does.
func RevisionNameOf(obj *federation.FederatedObject) (string, error) {
	data, err := snapshotOf(obj)
	if err != nil {
		return "", err
	}
	return revisionName(obj.GroupVersionKind().GroupKind(), obj.Name, data), nil
}
