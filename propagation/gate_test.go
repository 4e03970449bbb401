package propagation_test

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/gate"
	"github.com/fedkit/fedkit/propagation"
)

// TestRefusedDeleteIsAWarningAndALaterLook: the embedder's gate refuses every delete in the
// namespace shop. The policy goes: the generated FederatedDeployment stays, the native
// Deployment gets one Warning naming the object and the invariant, and the pass is no error
// to retry with backoff: it comes back after gate.RecheckAfter.
func TestRefusedDeleteIsAWarningAndALaterLook(t *testing.T) {
	ctx := context.Background()
	host := shopWithWeb(t, "")
	frozen := gate.Invariant{Name: "frozen-shop", Check: func(w gate.Write) string {
		if w.Verb == gate.Delete && w.Object.GetNamespace() == "shop" {
			return "shop is frozen"
		}
		return ""
	}}
	events := &recorder{}
	p, err := propagation.New(host, []federation.TypeConfig{federation.DeploymentType}, propagation.Options{
		Events: events, Gate: gate.New(gate.Options{Invariants: []gate.Invariant{frozen}}),
	})
	require.NoError(t, err)
	key := federation.Key{Namespace: "shop", Name: "web"}
	_, err = p.Reconcile(ctx, key)
	require.NoError(t, err)
	_, err = host.Peek(fdeployments, "shop", "web")
	require.NoError(t, err, "generated")

	require.NoError(t, host.Delete(ctx, pps, "shop", "web", metav1.DeleteOptions{}))
	for range 2 {
		res, err := p.Reconcile(ctx, key)
		require.NoError(t, err, "a refusal is no error to retry with backoff")
		require.Equal(t, gate.RecheckAfter, res.RequeueAfter)
	}
	_, err = host.Peek(fdeployments, "shop", "web")
	require.NoError(t, err, "the gate refused its delete")
	var refused []string
	for _, e := range events.all() {
		if strings.Contains(e, gate.ReasonRefused) {
			refused = append(refused, e)
		}
	}
	require.Len(t, refused, 1, "one Warning, not one per pass: %v", events.all())
	require.Contains(t, refused[0], "federateddeployments.types.federation.k8s.io shop/web in the host: shop is frozen (invariant frozen-shop)")
}
