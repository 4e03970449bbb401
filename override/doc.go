// Package override renders member objects: the exact object to write to one member cluster.
//
//	in := override.InputFor(fed, federation.DeploymentType)
//	in.ClusterName, in.ClusterLabels = "eu-1", map[string]string{"region": "eu"}
//	in.Replicas = &replicas // the cluster's schedule
//	in.Existing = member    // the member object that exists now, or nil
//	obj, err := override.Render(in)
//
// The inputs are a federated object's template, its overrides, the cluster's schedule and
// the member object that exists now. Rendering is pure: no I/O, clock, logging or global
// state. The same input always gives the same object, and inputs are never modified.
//
// # The render pipeline
//
// [Render] takes an [Input] and runs five steps, in this order. So do [Renderer.Render] and
// [Renderer.RenderMembers], which renders all clusters of an object at once.
//
//  1. Copy the template; set apiVersion and kind from the TypeConfig, name and namespace
//     from the federated object (no namespace for a cluster-scoped type), and drop metadata
//     the API server owns (uid, resourceVersion, generation, creationTimestamp,
//     managedFields, ...) should the template carry it.
//  2. Retain what the member cluster owns, from the existing member object (see "Retained
//     member fields" below).
//  3. Set the scheduled replicas at the TypeConfig's replicas path, unless step 2 retained
//     them. Only a divisible type (federation.TypeConfig.Divisible: it has a ReplicasPath)
//     has replicas: a ConfigMap, Service, DaemonSet or Job renders the same with or without
//     a schedule, and spec.retainReplicas does nothing for it.
//  4. Apply the cluster's overrides (see "Choosing overrides" below).
//  5. Add fedkit's labels and annotations: federation.ManagedByLabel, the federated name and
//     namespace labels, federation.RevisionAnnotation, the lists of label and annotation
//     keys and of finalizers the federation manages, and federation.DesiredHashAnnotation.
//
// Why this order. Identity (1) comes first and can never be overridden: an override cannot
// redirect a write to another object. Retention (2) comes before the schedule and the
// overrides, so that both still win over it. An override can change a retained field (set a
// Service's clusterIP to None). The schedule replaces the replica count unless the federated
// object asked to keep the member's. fedkit's own labels (5) come last, so no override can
// remove them; that would orphan the member object.
//
// # Retained member fields
//
// Step 2 goes through the retention table, [Retainers], which embedders extend for their own
// kinds. [DefaultRetainers] keeps these:
//
//   - resourceVersion and finalizers;
//   - member-added labels and annotations;
//   - Service cluster IPs and node ports;
//   - ServiceAccount secrets;
//   - a PVC's volumeName;
//   - a Job's selector and controller-uid labels.
//
// It also keeps the replica count when the federated object asks to retain replicas (an HPA
// runs in the member).
//
// After step 4, a Service's retained allocations that the final spec cannot carry are
// dropped again. Those are node ports after an override made it a ClusterIP Service, and a
// health check node port after one switched externalTrafficPolicy to Cluster.
//
// # Choosing overrides
//
// A federated object's overrides are a list of entries. Each names one cluster
// (clusterName) or selects clusters by label (clusterSelector). For a cluster, [ForCluster]
// picks the entries in a fixed order: every matching selector entry in list order, then the
// entry naming the cluster. Later entries win where they write the same location, so the
// most specific, the named entry, wins. A cluster named by two entries is an error. So is an
// entry with both or neither of name and selector.
//
// A selector means exactly what metav1.LabelSelectorAsSelector makes of it. Package
// placement and federation.ValidateOverrides share that one implementation. {} selects every
// cluster. A selector is invalid with any of these: a key that is not a qualified name, a
// value that is not a label value, In or NotIn without values, Exists or DoesNotExist with
// values, or an unknown operator. Render fails on an invalid selector for every cluster,
// whatever its labels, rather than silently matching or not. The error wraps
// [ErrInvalidOverride] and names the entry and the bad part
// (overrides[2].clusterSelector.matchLabels[bad key!]).
//
// Within an entry, the typed overriders apply first, in the order of their fields: replicas,
// images, containers, labels, annotations. Then come the raw RFC 6902 operations
// (clusterOverrides), so a raw operation can still adjust what a typed overrider wrote. Each
// typed overrider is rendered into RFC 6902 operations against the object as it is at that
// point. So there is one way changes are applied and one set of errors.
//
// A replicas overrider on a type that is not divisible is an error: the type has no replica
// count. Image overriders parse image references with Docker's grammar, the one validation
// uses. Overrides must apply to the object the federation would create. They may not depend
// on fields only the member has, because the same overrides render the object again when a
// member is recreated.
//
// # Validating before an object is stored
//
// Some mistakes depend on the template, so they pass federation.ValidateFederatedObject, the
// API server and the scheduler. Examples are an override path the template does not have
// (remove /spec/paused when there is no paused), a typed overrider naming a container the
// pod template lacks, and a replicas overrider on a kind without replicas. Rendering finds
// them. Without a check, sync is the first to render: it reports RenderFailed for those
// clusters once the object is stored.
//
// [Validate] is the one check that finds them before. It runs validation, then a dry-run
// render for every cluster and every cluster an override names. Each error has its field
// path and the clusters it fails for. Admission webhooks, platform APIs and CI jobs call it.
//
// # Operations
//
// [Apply] applies RFC 6902 operations to an unstructured object, atomically: add, remove,
// replace, test, and an empty op is replace. It edits the decoded object directly. It copies
// only the maps and slices on the edited paths (copy-on-write), instead of encoding the
// object to JSON, patching the bytes and decoding them again.
//
// It returns the same object as github.com/evanphx/json-patch/v5, the reference
// implementation. The package's tests hold it to that with a property test and a fuzz
// target. The exceptions are where json-patch strays from the RFCs: array indexes such as
// "01", a test for null on an absent member, and a panic on some tests with nulls inside
// arrays.
//
// [Pointer] builds a path from field names and keys, escaping the "/" of keys such as
// app.kubernetes.io/name. Paths that identify the object are rejected with
// [ErrIdentityPath]: /metadata/name, /metadata/namespace, /metadata/generateName, /kind,
// /apiVersion, /metadata. [Compile] validates a list once for many objects.
//
// # The desired-state hash
//
// The hash in federation.DesiredHashAnnotation covers the object Render returns for the
// cluster when no member object exists, less the hash and revision annotations. That is the
// rendering without retention. It changes when the template, the cluster's overrides, its
// schedule, the identity or the type change. It does not change when anything the member
// owns does: resourceVersion, allocated IPs and ports, member labels, HPA replicas. So sync
// can skip an update whose hash matches, and the revision alone never forces a write.
//
// The value is versioned: "v2:" and 32 hex digits. They are the first 128 bits of the
// SHA-256 of the object's canonical encoding: keys sorted, every value tagged and
// length-prefixed, defined byte for byte in hash.go. Compare values for equality only.
// Whenever the hash of an unchanged object changes, the prefix changes too ("v1" was the
// previous, home-made hash). So a sync loop may find a member whose value has another prefix
// than the one Render writes. It then knows that the hash scheme changed, not necessarily
// the object: it can compare the objects themselves, or update once.
//
// # Memory
//
// Render builds the member object copy-on-write over Input.Template: the result shares the
// template's unchanged maps and slices. It is safe to read, encode and send to an API
// server; DeepCopy it before changing it in place. It shares nothing with Input.Existing,
// the overrides or the cluster labels. Retain functions see the object through a [Target],
// whose Set, Map and Remove copy what they write.
//
// # Errors
//
// Every error wraps one of the package's sentinel errors, so callers branch with errors.Is:
// ErrPathNotFound, ErrTestFailed, ErrInvalidIndex, ErrIdentityPath, ErrInvalidImage,
// ErrContainerNotFound, ErrInvalidOverride, and others. An error about an operation is a
// [*PathError] with the operation, the path and, from Render, the cluster. Render's messages
// also name the object: `override: render Deployment shop/web: cluster "eu-1": remove
// /spec/paused: override: path not found: no member "paused" to remove`.
package override
