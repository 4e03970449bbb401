package kube

import (
	"context"
	"fmt"
	"path"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/fedkit/fedkit/federation"
)

var _ federation.CustomMetricsGetter = (*Client)(nil)

// GetCustomMetric reads the custom metrics API (GET
// /apis/custom.metrics.k8s.io/v1beta2/namespaces/NAMESPACE/RESOURCE/NAME/METRIC, with
// labelSelector and metricLabelSelector), as an HPA's controller does. Errors follow the
// rules of Healthy; an API not served, or a metric the adapter does not know, is an error
// satisfying apierrors.IsNotFound. It implements federation.CustomMetricsGetter.
func (c *Client) GetCustomMetric(ctx context.Context, namespace, resource, name, metric, selector, metricSelector string) (*unstructured.UnstructuredList, error) {
	const op = "get custom metric"
	if c.disc == nil {
		return nil, fmt.Errorf("kube: %s: %w", op, ErrNoDiscovery)
	}
	req := c.disc.RESTClient().Get().AbsPath(path.Join("/apis/custom.metrics.k8s.io/v1beta2/namespaces", namespace, resource, name, metric))
	if selector != "" {
		req = req.Param("labelSelector", selector)
	}
	if metricSelector != "" {
		req = req.Param("metricLabelSelector", metricSelector)
	}
	body, err := req.Do(ctx).Raw()
	if err != nil {
		return nil, c.wrapErr(fmt.Sprintf("%s %s of %s/%s/%s", op, metric, namespace, resource, name), err)
	}
	list := &unstructured.UnstructuredList{}
	if err := list.UnmarshalJSON(body); err != nil {
		return nil, fmt.Errorf("kube: %s: decode the answer: %w", op, err)
	}
	return list, nil
}
