// Package override renders member objects: from a federated object's template, its
// overrides, the cluster's schedule and the member object that exists now, it produces the
// exact object to write to one member cluster. It is pure: no I/O, clock, logging or global
// state; the same input always gives the same object, and inputs are never modified.
//
// # The render pipeline
//
// [Render] (or [Renderer.Render], or [Renderer.RenderMembers] for all clusters of an object
// at once) takes an [Input] and runs five steps, in this order:
//
//  1. Copy the template; set apiVersion and kind from the TypeConfig, name and namespace
//     from the federated object (no namespace for a cluster-scoped type), and drop metadata
//     the API server owns (uid, resourceVersion, generation, creationTimestamp,
//     managedFields, ...) should the template carry it.
//  2. Retain what the member cluster owns, from the existing member object, through the
//     retention table ([Retainers], which embedders extend for their own kinds;
//     [DefaultRetainers] keeps resourceVersion, finalizers, member-added labels and
//     annotations, Service cluster IPs and node ports, ServiceAccount secrets, a PVC's
//     volumeName, a Job's selector and controller-uid labels), and the replica count when
//     the federated object asks to retain replicas (an HPA runs in the member).
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
// overrides so that both still win over it: an override can change a retained field (set a
// Service's clusterIP to None) and the schedule replaces the replica count unless the
// federated object asked to keep the member's. fedkit's own labels (5) come last so no
// override can remove them, which would orphan the member object.
//
// After step 4, a Service's retained allocations that the final spec cannot carry (node
// ports after an override made it a ClusterIP Service, a health check node port after one
// switched externalTrafficPolicy to Cluster) are dropped again.
//
// # Choosing overrides
//
// A federated object's overrides are a list of entries, each naming one cluster
// (clusterName) or selecting clusters by label (clusterSelector). For a cluster,
// [ForCluster] picks the entries in a fixed order: every matching selector entry in list
// order, then the entry naming the cluster. Later entries win where they write the same
// location, so the most specific, the named entry, wins. A cluster named by two entries,
// or an entry with both or neither of name and selector, is an error.
//
// A selector means exactly what metav1.LabelSelectorAsSelector makes of it, as in package
// placement and in federation.ValidateOverrides (all three share one implementation):
// {} selects every cluster, and a selector with a key that is not a qualified name, a
// value that is not a label value, In or NotIn without values, Exists or DoesNotExist with
// values, or an unknown operator is invalid. Render fails on an invalid selector for every
// cluster, whatever its labels, with an error wrapping [ErrInvalidOverride] that names the
// entry and the bad part (overrides[2].clusterSelector.matchLabels[bad key!]), rather than
// silently matching or not.
//
// Within an entry, the typed overriders apply first, in the order of their fields
// (replicas, images, containers, labels, annotations), then the raw RFC 6902 operations
// (clusterOverrides), so a raw operation can still adjust what a typed overrider wrote.
// Each typed overrider is rendered into RFC 6902 operations against the object as it is at
// that point, so there is one way changes are applied and one set of errors. A replicas
// overrider on a type that is not divisible is an error: the type has no replica count.
// Image overriders parse image references with Docker's grammar, the one validation uses.
// Overrides must apply to the object the federation would create: they may not depend on
// fields only the member has, because the same overrides render the object again when a
// member is recreated.
//
// # Validating before an object is stored
//
// Some mistakes pass federation.ValidateFederatedObject, the API server and the scheduler,
// because they depend on the template: an override path the template does not have
// (remove /spec/paused when there is no paused), a typed overrider naming a container the
// pod template lacks, a replicas overrider on a kind without replicas. Rendering finds them,
// and without a check sync is the first to render: it reports RenderFailed for those
// clusters once the object is stored. [Validate] is the one check that finds them before:
// validation, then a dry-run render for every cluster (and every cluster an override names),
// each error with its field path and the clusters it fails for. Admission webhooks,
// platform APIs and CI jobs call it.
//
// # Operations
//
// [Apply] applies RFC 6902 operations (add, remove, replace, test; an empty op is replace)
// to an unstructured object, atomically. It edits the decoded object directly, copying only
// the maps and slices on the edited paths (copy-on-write), instead of encoding the object
// to JSON, patching the bytes and decoding them again. It returns the same object as
// github.com/evanphx/json-patch/v5, the reference implementation the package's tests hold
// it to (a property test and a fuzz target), except where json-patch strays from the RFCs
// (array indexes such as "01", a test for null on an absent member, and a panic on some
// tests with nulls inside arrays). [Pointer] builds a path from field names and keys,
// escaping the "/" of keys such as app.kubernetes.io/name. Paths that identify the object
// (/metadata/name, /metadata/namespace, /metadata/generateName, /kind, /apiVersion,
// /metadata) are rejected with [ErrIdentityPath]. [Compile] validates a list once for many
// objects.
//
// # The desired-state hash
//
// The hash in federation.DesiredHashAnnotation covers the object Render returns for the
// cluster when no member object exists, that is the rendering without retention, less the
// hash and revision annotations. It changes when the template, the cluster's overrides,
// its schedule, the identity or the type change, and not when anything the member owns
// does (resourceVersion, allocated IPs and ports, member labels, HPA replicas), so sync can
// skip an update whose hash matches, and the revision alone never forces a write.
//
// The value is versioned: "v2:" and 32 hex digits, the first 128 bits of the SHA-256 of the
// object's canonical encoding (keys sorted, every value tagged and length-prefixed, defined
// byte for byte in hash.go). Compare values for equality only. Whenever the hash of an
// unchanged object changes, the prefix changes too ("v1" was the previous, home-made
// hash), so a sync loop that finds a member whose value has another prefix than the one
// Render writes knows that the hash scheme changed, not necessarily the object: it can
// compare the objects themselves, or update once.
//
// # Memory
//
// Render builds the member object copy-on-write over Input.Template: the result shares
// the template's unchanged maps and slices. It is safe to read, encode and send to an API
// server; DeepCopy it before changing it in place. It shares nothing with Input.Existing,
// the overrides or the cluster labels. Retain functions see the object through a [Target],
// whose Set, Map and Remove copy what they write.
//
// # Errors
//
// Every error wraps one of the package's sentinel errors (ErrPathNotFound, ErrTestFailed,
// ErrInvalidIndex, ErrIdentityPath, ErrInvalidImage, ErrContainerNotFound,
// ErrInvalidOverride, ...), so callers branch with errors.Is. An error about an operation
// is a [*PathError] with the operation, the path and, from Render, the cluster; Render's
// messages also name the object: `override: render Deployment shop/web: cluster "eu-1":
// remove /spec/paused: override: path not found: no member "paused" to remove`.
package override
