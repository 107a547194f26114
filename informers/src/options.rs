//! [`InformerOptions`]: how one shared informer is made, when the factory's defaults are not
//! enough (client-go's `InformerFor` with a custom constructor, plus per-informer
//! `TweakListOptions`, indexers and resync).

use std::sync::Arc;
use std::time::Duration;

use kclient_apimachinery::ListOptions;
use kclient_cache::{IndexFunc, Indexers, ListerWatcher};

use crate::list_watch::TweakListOptionsFunc;

/// How [`SharedInformerFactory::informer_with`](crate::SharedInformerFactory::informer_with)
/// makes the informer of one resource.
///
/// Every field is optional; start from [`InformerOptions::new`] (or `Default`) and set what
/// you need, with the builder methods or by assigning the public fields:
///
/// ```
/// use std::time::Duration;
/// use kclient_api::core::v1::Pod;
/// use kclient_informers::InformerOptions;
///
/// let options = InformerOptions::<Pod>::new()
///     .tweak_list_options(|opts| opts.label_selector = Some("app=web".into()))
///     .indexer("by-node", |pod: &Pod| {
///         let node = pod.spec.as_ref().and_then(|spec| spec.node_name.as_deref());
///         node.map(|node| vec![node.to_string()]).unwrap_or_default()
///     })
///     .resync(Duration::from_secs(60));
/// # let _ = options;
/// ```
///
/// The options take effect only when they make the informer: the first request for a
/// resource decides how its informer is made, and later requests (with or without options)
/// share that informer, as with client-go's `InformerFor`.
#[non_exhaustive]
pub struct InformerOptions<K> {
    /// Adjusts every list and watch of this informer, after the factory's own tweak
    /// ([`with_tweak_list_options`](crate::SharedInformerFactory::with_tweak_list_options));
    /// for example a label selector. With a custom [`lister_watcher`](Self::lister_watcher),
    /// only this tweak applies (the factory's tweak and namespace are for the sources it
    /// makes itself).
    pub tweak_list_options: Option<Arc<TweakListOptionsFunc>>,
    /// Index functions added to the cache, beside the `namespace` index every namespaced
    /// resource gets.
    pub indexers: Indexers<K>,
    /// The handlers' resync period; `None` takes the factory's (custom or default) period.
    pub resync: Option<Duration>,
    /// Where the informer lists and watches; `None` is the factory's REST source (its client,
    /// namespace and tweak). Supply one for a custom ListerWatcher (a field selector the
    /// factory cannot express, a fake, a wrapper that counts requests).
    pub lister_watcher: Option<Arc<dyn ListerWatcher<K>>>,
}

impl<K> Default for InformerOptions<K> {
    fn default() -> Self {
        InformerOptions {
            tweak_list_options: None,
            indexers: Indexers::new(),
            resync: None,
            lister_watcher: None,
        }
    }
}

impl<K> InformerOptions<K> {
    /// No options: what the factory would do anyway.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets [`tweak_list_options`](Self::tweak_list_options).
    pub fn tweak_list_options(
        mut self,
        tweak: impl Fn(&mut ListOptions) + Send + Sync + 'static,
    ) -> Self {
        self.tweak_list_options = Some(Arc::new(tweak));
        self
    }

    /// Adds an index function named `name` to [`indexers`](Self::indexers).
    pub fn indexer(
        mut self,
        name: impl Into<String>,
        index: impl Fn(&K) -> Vec<String> + Send + Sync + 'static,
    ) -> Self {
        let index: IndexFunc<K> = Arc::new(index);
        self.indexers.insert(name.into(), index);
        self
    }

    /// Sets [`resync`](Self::resync).
    pub fn resync(mut self, period: Duration) -> Self {
        self.resync = Some(period);
        self
    }

    /// Sets [`lister_watcher`](Self::lister_watcher).
    pub fn lister_watcher(mut self, lister_watcher: Arc<dyn ListerWatcher<K>>) -> Self {
        self.lister_watcher = Some(lister_watcher);
        self
    }
}

impl<K> std::fmt::Debug for InformerOptions<K> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut indexers: Vec<&str> = self.indexers.keys().map(String::as_str).collect();
        indexers.sort_unstable();
        f.debug_struct("InformerOptions")
            .field("tweak_list_options", &self.tweak_list_options.is_some())
            .field("indexers", &indexers)
            .field("resync", &self.resync)
            .field("lister_watcher", &self.lister_watcher.is_some())
            .finish()
    }
}
