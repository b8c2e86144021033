package oracle

import (
	"context"
	"errors"
	"time"
	_ "unsafe" // go:linkname

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apiserver/pkg/authentication/authenticator"
	typedv1core "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/util/keyutil"
	"k8s.io/kubernetes/pkg/serviceaccount"

	"kube-authn.example/conformance/vector"
)

// saNow is pkg/serviceaccount's clock (`now = time.Now`, stubbed by k8s' own tests), bound with
// go:linkname to the exact symbol of the pinned k8s.io/kubernetes: the bound-token validator
// reads it once per token, so the vectors' fixed "now" is what it sees.
//
//go:linkname saNow k8s.io/kubernetes/pkg/serviceaccount.now
var saNow func() time.Time

// serviceAccount builds kube-apiserver's service-account token authenticator as
// pkg/kubeapiserver/authenticator/config.go does: the keys parsed by keyutil.ParsePublicKeysPEM
// (--service-account-key-file) behind a static key getter, the legacy authenticator
// (issuer "kubernetes/serviceaccount", NewLegacyValidator without lookups: the vectors' legacy
// cases are --service-account-lookup=false) or the bound one (the --service-account-issuer
// values, NewValidator whose getter answers from the vector's objects), --api-audiences as
// the implicit audiences.
func (b *builder) serviceAccount(n *vector.Node) (authenticator.Token, error) {
	keys, err := keyutil.ParsePublicKeysPEM([]byte(n.Keys))
	if err != nil {
		return nil, configError{err}
	}
	getter, err := serviceaccount.StaticPublicKeysGetter(keys)
	if err != nil {
		return nil, configError{err}
	}
	now := time.Unix(n.Now, 0)
	saNow = func() time.Time { return now }
	b.cleanups = append(b.cleanups, func() { saNow = time.Now })
	auds := authenticator.Audiences(n.ImplicitAudiences)
	objects := objectGetter{}
	if n.Lookup != nil {
		objects = objectGetter{
			serviceAccounts: n.Lookup.ServiceAccounts, secrets: n.Lookup.Secrets,
			pods: n.Lookup.Pods, nodes: n.Lookup.Nodes,
		}
	}
	switch n.Mode {
	case "legacy":
		// --service-account-lookup: with lookups the validator also patches the secret's
		// last-used label through the API (accepted and dropped here).
		issuers := []string{serviceaccount.LegacyIssuer}
		if n.Lookup != nil {
			v, err := serviceaccount.NewLegacyValidator(true, objects, secretsWriter{})
			if err != nil {
				return nil, configError{err}
			}
			return serviceaccount.JWTTokenAuthenticator(issuers, getter, auds, v), nil
		}
		v, err := serviceaccount.NewLegacyValidator(false, nil, nil)
		if err != nil {
			return nil, configError{err}
		}
		return serviceaccount.JWTTokenAuthenticator(issuers, getter, auds, v), nil
	case "bound":
		return serviceaccount.JWTTokenAuthenticator(n.Issuers, getter, auds, serviceaccount.NewValidator(objects)), nil
	}
	return nil, errors.New("service_account: unknown mode " + n.Mode)
}

// objectGetter is the API server's object store for the validators (in kube-apiserver,
// informer listers, then the loopback client, over etcd): it answers from the vector's objects
// (see find), and a missing object is the API's NotFound error, whose text the validator passes
// on for service accounts.
type objectGetter struct {
	serviceAccounts, secrets, pods, nodes []vector.Object
}

// find answers as kube-apiserver's getter does for these objects (pkg/controller/serviceaccount
// clientGetter: its informer cache, then its loopback client): an empty name is refused by
// client-go before any request ("resource name may not be empty", rest.Request.Name); a
// namespaced object asked for without a namespace is a GET on /api/v1/<resource>/<name>, a
// path kube-apiserver has no route for (404, "the server could not find the requested
// resource"); otherwise the object (and its metadata) or the API's NotFound.
func find(objs []vector.Object, resource, namespace, name string) (*vector.Object, metav1.ObjectMeta, error) {
	if name == "" {
		return nil, metav1.ObjectMeta{}, errors.New("resource name may not be empty")
	}
	if namespace == "" && resource != "nodes" {
		return nil, metav1.ObjectMeta{}, &apierrors.StatusError{ErrStatus: metav1.Status{
			Status: metav1.StatusFailure, Code: 404, Reason: metav1.StatusReasonNotFound,
			Message: "the server could not find the requested resource",
		}}
	}
	for i := range objs {
		if o := &objs[i]; o.Namespace == namespace && o.Name == name {
			meta := metav1.ObjectMeta{Namespace: o.Namespace, Name: o.Name, UID: types.UID(o.UID)}
			if o.DeletionTimestamp != nil {
				t := metav1.NewTime(time.Unix(*o.DeletionTimestamp, 0))
				meta.DeletionTimestamp = &t
			}
			return o, meta, nil
		}
	}
	return nil, metav1.ObjectMeta{}, apierrors.NewNotFound(schema.GroupResource{Resource: resource}, name)
}

func (g objectGetter) GetServiceAccount(_ context.Context, namespace, name string) (*v1.ServiceAccount, error) {
	o, meta, err := find(g.serviceAccounts, "serviceaccounts", namespace, name)
	if err != nil {
		return nil, err
	}
	sa := &v1.ServiceAccount{ObjectMeta: meta}
	for _, s := range o.Secrets {
		sa.Secrets = append(sa.Secrets, v1.ObjectReference{Name: s})
	}
	return sa, nil
}

func (g objectGetter) GetPod(_ context.Context, namespace, name string) (*v1.Pod, error) {
	_, meta, err := find(g.pods, "pods", namespace, name)
	if err != nil {
		return nil, err
	}
	return &v1.Pod{ObjectMeta: meta}, nil
}

func (g objectGetter) GetSecret(_ context.Context, namespace, name string) (*v1.Secret, error) {
	o, meta, err := find(g.secrets, "secrets", namespace, name)
	if err != nil {
		return nil, err
	}
	secret := &v1.Secret{ObjectMeta: meta}
	if o.Token != nil {
		secret.Data = map[string][]byte{v1.ServiceAccountTokenKey: []byte(*o.Token)}
	}
	if o.InvalidSince != nil {
		secret.Labels = map[string]string{serviceaccount.InvalidSinceLabelKey: *o.InvalidSince}
	}
	return secret, nil
}

func (g objectGetter) GetNode(_ context.Context, name string) (*v1.Node, error) {
	_, meta, err := find(g.nodes, "nodes", "", name)
	if err != nil {
		return nil, err
	}
	return &v1.Node{ObjectMeta: meta}, nil
}

func (g objectGetter) GetValidatingWebhookConfiguration(_ context.Context, name string) (*admissionregistrationv1.ValidatingWebhookConfiguration, error) {
	return nil, apierrors.NewNotFound(schema.GroupResource{Group: "admissionregistration.k8s.io", Resource: "validatingwebhookconfigurations"}, name)
}

func (g objectGetter) GetMutatingWebhookConfiguration(_ context.Context, name string) (*admissionregistrationv1.MutatingWebhookConfiguration, error) {
	return nil, apierrors.NewNotFound(schema.GroupResource{Group: "admissionregistration.k8s.io", Resource: "mutatingwebhookconfigurations"}, name)
}

// secretsWriter is where the legacy validator patches a secret's last-used label (in
// kube-apiserver, the API): the patch is accepted and dropped.
type secretsWriter struct{}

func (secretsWriter) Secrets(string) typedv1core.SecretInterface { return patchOnlySecrets{} }

// patchOnlySecrets implements the one method the legacy validator calls.
type patchOnlySecrets struct{ typedv1core.SecretInterface }

func (patchOnlySecrets) Patch(context.Context, string, types.PatchType, []byte, metav1.PatchOptions, ...string) (*v1.Secret, error) {
	return nil, nil
}
