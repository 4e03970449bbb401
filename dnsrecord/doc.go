// Package dnsrecord publishes federated Services and Ingresses in DNS.
//
// +groupName=multiclusterdns.federation.k8s.io
// +versionName=v1alpha1
package dnsrecord
