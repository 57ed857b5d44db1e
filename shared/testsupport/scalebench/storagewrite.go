package scalebench

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
	"k8s.io/client-go/kubernetes/scheme"
)

// storageWriter writes objects straight into the API server's storage: etcd, under the keys and in the
// protobuf encoding kube-apiserver uses for core objects. The API server's watch on etcd picks each
// write up into its watch cache as it would its own, and it serves, defaults and versions the objects
// as if clients had created them. Through the API (create, then the status) 30,000 pods
// took 13-21 minutes to load on 2 cores, kube-apiserver bound; this way they take 51-75 s, and 150,000
// take 5-6 minutes. The objects must be complete as the API server
// would have stored them (uid, creationTimestamp, managedFields, status; no resourceVersion):
// TestObjectsWrittenToStorageReadBackAsThoughCreatedThroughTheAPI holds the generator to that.
type storageWriter struct {
	url    string
	client *http.Client
	enc    runtime.Encoder
}

// storagePrefix is kube-apiserver's default --etcd-prefix.
const storagePrefix = "/registry"

func newStorageWriter(etcdURL string) *storageWriter {
	proto := protobuf.NewSerializer(scheme.Scheme, scheme.Scheme)
	return &storageWriter{
		url: etcdURL,
		client: &http.Client{Timeout: time.Minute, Transport: &http.Transport{
			MaxIdleConns: 2 * writers, MaxIdleConnsPerHost: 2 * writers, IdleConnTimeout: time.Minute}},
		enc: scheme.Codecs.EncoderForVersion(proto, corev1.SchemeGroupVersion),
	}
}

// key is where kube-apiserver stores a core object of resource (its storage name: Nodes are "minions").
func storageKey(resource, namespace, name string) string {
	if namespace == "" {
		return storagePrefix + "/" + resource + "/" + name
	}
	return storagePrefix + "/" + resource + "/" + namespace + "/" + name
}

// put stores obj under key, as kube-apiserver would after a create.
func (w *storageWriter) put(ctx context.Context, key string, obj runtime.Object) error {
	var value bytes.Buffer
	if err := w.enc.Encode(obj, &value); err != nil {
		return fmt.Errorf("encoding %s: %w", key, err)
	}
	body, err := json.Marshal(map[string]string{
		"key":   base64.StdEncoding.EncodeToString([]byte(key)),
		"value": base64.StdEncoding.EncodeToString(value.Bytes()),
	})
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, w.url+"/v3/kv/put", bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := w.client.Do(req)
	if err != nil {
		return fmt.Errorf("storing %s: %w", key, err)
	}
	defer resp.Body.Close()
	answer, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("storing %s: etcd answered %s: %s", key, resp.Status, answer)
	}
	return nil
}

// putNode stores a registered, Ready Node: the object the kubelet's registration, its status post and the
// node-lifecycle controller's lifting of the not-ready taint leave.
func (w *storageWriter) putNode(ctx context.Context, n *corev1.Node) error {
	return w.put(ctx, storageKey("minions", "", n.Name), n)
}

// putPod stores a pod as its controller created it and the kubelet (or kube-scheduler) posted its status.
func (w *storageWriter) putPod(ctx context.Context, p *corev1.Pod) error {
	return w.put(ctx, storageKey("pods", p.Namespace, p.Name), p)
}

// putVolume stores a bound PVC and its PV.
func (w *storageWriter) putVolume(ctx context.Context, pvc *corev1.PersistentVolumeClaim, pv *corev1.PersistentVolume) error {
	if err := w.put(ctx, storageKey("persistentvolumeclaims", pvc.Namespace, pvc.Name), pvc); err != nil {
		return err
	}
	return w.put(ctx, storageKey("persistentvolumes", "", pv.Name), pv)
}
