package soak

import (
	"context"
	"errors"
	"fmt"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/fedkit/fedkit/federation"
)

// The user's hands on the host: a person with kubectl, whose writes go through the API (so
// they meet the injected errors and Conflicts like everyone's) and who tries again, as
// `kubectl edit` and a CI pipeline do, when a write fails for a reason that passes.

// userAttempts bounds the user's retries: at a 20% error rate, 40 failures in a row do not
// happen.
const userAttempts = 40

// errGone is returned by userEdit when the object does not exist (or is being deleted): the
// event has nothing to act on.
var errGone = errors.New("soak: the object is gone")

// retryable reports whether the user tries a failed write again.
func retryable(err error) bool {
	return apierrors.IsServiceUnavailable(err) || apierrors.IsConflict(err) || apierrors.IsTimeout(err) ||
		apierrors.IsServerTimeout(err) || apierrors.IsTooManyRequests(err)
}

// userCreate creates obj on the host.
func (w *World) userCreate(ctx context.Context, gvr schema.GroupVersionResource, obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	var err error
	for range userAttempts {
		var out *unstructured.Unstructured
		if out, err = w.Host.Create(ctx, gvr, obj.DeepCopy()); err == nil || !retryable(err) {
			if err == nil {
				w.noteUserMade(gvr, out)
			}
			return out, err
		}
	}
	return nil, fmt.Errorf("soak: create %s %s: %w", gvr.Resource, objectRef(obj.GetNamespace(), obj.GetName()), err)
}

// userEdit reads an object, lets mutate change it and updates it, again on a Conflict or an
// injected error. mutate returning false skips the write. A missing object (or one being
// deleted) is errGone.
func (w *World) userEdit(ctx context.Context, gvr schema.GroupVersionResource, ns, name string, mutate func(u *unstructured.Unstructured) bool) error {
	var err error
	for range userAttempts {
		var u *unstructured.Unstructured
		u, err = w.Host.Get(ctx, gvr, ns, name)
		switch {
		case apierrors.IsNotFound(err):
			return errGone
		case err != nil && retryable(err):
			continue
		case err != nil:
			return err
		case u.GetDeletionTimestamp() != nil:
			return errGone
		}
		if !mutate(u) {
			return nil
		}
		if _, err = w.Host.Update(ctx, gvr, u); err == nil || !retryable(err) {
			if apierrors.IsNotFound(err) {
				return errGone
			}
			return err
		}
	}
	return fmt.Errorf("soak: edit %s %s: %w", gvr.Resource, objectRef(ns, name), err)
}

// userUpdateStatus writes status st on a freshly created object (registering a Cluster).
func (w *World) userUpdateStatus(ctx context.Context, gvr schema.GroupVersionResource, u *unstructured.Unstructured, st any) error {
	var err error
	for range userAttempts {
		u.Object["status"] = st
		if _, err = w.Host.UpdateStatus(ctx, gvr, u); err == nil || !retryable(err) {
			return err
		}
		if apierrors.IsConflict(err) {
			if u, err = w.Host.Peek(gvr, u.GetNamespace(), u.GetName()); err != nil {
				return err
			}
		}
	}
	return err
}

// userDelete deletes an object; a missing one is fine.
func (w *World) userDelete(ctx context.Context, gvr schema.GroupVersionResource, ns, name string) error {
	w.forgetUserMade(gvr, ns, name)
	var err error
	for range userAttempts {
		err = w.Host.Delete(ctx, gvr, ns, name, metav1.DeleteOptions{})
		switch {
		case err == nil, apierrors.IsNotFound(err):
			return nil
		case !retryable(err):
			return err
		}
	}
	return fmt.Errorf("soak: delete %s %s: %w", gvr.Resource, objectRef(ns, name), err)
}

// userObject is an object the user made on the host: no loop deletes it or takes it over.
type userObject struct {
	gvr      schema.GroupVersionResource
	ns, name string
	uid      string
}

// userMadeKinds are the resources whose objects the user's are watched: the native objects
// and the federated objects.
func userMadeKind(gvr schema.GroupVersionResource) bool {
	switch gvr {
	case deploymentsGVR, configMapsGVR, secretsGVR, claimsGVR:
		return true
	}
	for _, typ := range kinds() {
		if typ.FederatedGVR() == gvr {
			return true
		}
	}
	return false
}

func (w *World) noteUserMade(gvr schema.GroupVersionResource, u *unstructured.Unstructured) {
	if u == nil || !userMadeKind(gvr) {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.userMade = append(w.userMade, userObject{gvr: gvr, ns: u.GetNamespace(), name: u.GetName(), uid: string(u.GetUID())})
}

func (w *World) forgetUserMade(gvr schema.GroupVersionResource, ns, name string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.userMade = slices.DeleteFunc(w.userMade, func(o userObject) bool { return o.gvr == gvr && o.ns == ns && o.name == name })
}

// checkUserMade: every object the user made on the host and did not delete is still there,
// the same object, and no loop took it over (the generated-by label) (RuleForeignUntouched).
func (w *World) checkUserMade() {
	w.mu.Lock()
	objs := slices.Clone(w.userMade)
	w.mu.Unlock()
	for _, o := range objs {
		u, err := w.Host.Peek(o.gvr, o.ns, o.name)
		what := fmt.Sprintf("%s %s on the host", o.gvr.Resource, objectRef(o.ns, o.name))
		switch {
		case err != nil || string(u.GetUID()) != o.uid:
			w.violate(RuleForeignUntouched, what, "the user made it and did not delete it, and it is gone or made again (%v)", err)
		case u.GetDeletionTimestamp() != nil:
			w.violate(RuleForeignUntouched, what, "the user made it and did not delete it, and it is being deleted")
		case u.GetLabels()[federation.GeneratedByLabel] != "":
			w.violate(RuleForeignUntouched, what, "the user made it, and the %s loop took it over", u.GetLabels()[federation.GeneratedByLabel])
		default:
			continue
		}
		w.forgetUserMade(o.gvr, o.ns, o.name) // reported once
	}
}
