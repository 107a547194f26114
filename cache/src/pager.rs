//! Paginated lists: follow `continue` tokens page by page (client-go's `tools/pager`).
//!
//! The server splits a large list into pages when the request sets `limit`; each page but the
//! last carries a `continue` token that asks for the next one. [`ListPager`] hides that loop
//! in three forms:
//!
//! - [`ListPager::list`] (and [`ListPager::list_map`], which turns each object into something
//!   else as its page arrives) returns every item. If a `continue` token has expired (410
//!   Gone, the server compacted past the list's version) it falls back, once, to a full list
//!   at the original version, as client-go's `FullListIfExpired` does: a list that is
//!   gathered whole can restart, so it never fails for taking too long.
//! - [`ListPager::pages`] yields one page at a time.
//! - [`ListPager::items`] yields one object at a time and holds at most one page in memory.
//!
//! The streaming forms cannot restart (what they yielded is gone), so an expired token ends
//! them with the 410 error, as client-go's `EachListItem` does.

use std::collections::VecDeque;
use std::sync::Arc;

use futures_util::stream::{self, BoxStream, StreamExt};
use kclient_apimachinery::{Error, ListOptions, ObjectList};

use crate::listwatch::ListerWatcher;

/// The page size of paginated lists (client-go's pager default).
pub const DEFAULT_PAGE_SIZE: i64 = 500;

/// Lists through a [`ListerWatcher`] page by page (client-go's `ListPager`).
///
/// ```
/// use std::sync::Arc;
/// use kclient_api::core::v1::Pod;
/// # use kclient_apimachinery::Object;
/// # fn pod(namespace: &str, name: &str, resource_version: &str) -> Pod {
/// #     let mut pod = Pod::default();
/// #     pod.set_namespace(namespace);
/// #     pod.set_name(name);
/// #     pod.set_resource_version(resource_version);
/// #     pod
/// # }
/// use kclient_apimachinery::{ListMeta, ListOptions, ObjectList};
/// use kclient_cache::{ListPager, ListWatch};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), kclient_apimachinery::Error> {
/// // A source with three pods served two per page.
/// let lw = ListWatch::new(
///     |opts: ListOptions| async move {
///         let pods = ["a", "b", "c"].map(|name| pod("default", name, "7"));
///         let start: usize = opts.continue_token.as_deref().unwrap_or("0").parse().unwrap();
///         let end = (start + opts.limit as usize).min(pods.len());
///         let next = if end < pods.len() { end.to_string() } else { String::new() };
///         Ok(ObjectList {
///             metadata: ListMeta { resource_version: "7".into(), continue_token: next, ..ListMeta::default() },
///             items: pods[start..end].to_vec(),
///         })
///     },
///     |_opts: ListOptions| async { Ok(futures_util::stream::empty()) },
/// );
/// let pager = ListPager::new(Arc::new(lw)).with_page_size(2);
/// let all = pager.list(ListOptions::default()).await?;
/// assert_eq!(all.items.len(), 3);
/// assert!(all.paginated);
/// assert_eq!(all.resource_version, "7");
/// # Ok(()) }
/// ```
pub struct ListPager<K> {
    lister: Arc<dyn ListerWatcher<K>>,
    page_size: i64,
    full_list_if_expired: bool,
}

impl<K> Clone for ListPager<K> {
    fn clone(&self) -> Self {
        ListPager {
            lister: Arc::clone(&self.lister),
            page_size: self.page_size,
            full_list_if_expired: self.full_list_if_expired,
        }
    }
}

impl<K> std::fmt::Debug for ListPager<K> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ListPager")
            .field("page_size", &self.page_size)
            .field("full_list_if_expired", &self.full_list_if_expired)
            .finish_non_exhaustive()
    }
}

/// Every item of a list, with the list's resource version.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct PagedList<T> {
    /// The items, in the server's order.
    pub items: Vec<T>,
    /// The resource version of the first page (the version the whole list is consistent at).
    pub resource_version: String,
    /// Whether the server returned more than one page.
    pub paginated: bool,
}

/// What [`ListPager::list_each`] hands its consumer.
pub(crate) enum Listed<K> {
    /// A page of this many items follows.
    Page(usize),
    /// An item of the list.
    Item(K),
    /// The items handed so far are void: the full list follows from its start.
    Restart,
}

impl<K: Send + 'static> ListPager<K> {
    /// A pager asking for [`DEFAULT_PAGE_SIZE`] items per page, falling back to a full list
    /// when a `continue` token expires.
    pub fn new(lister: Arc<dyn ListerWatcher<K>>) -> Self {
        ListPager {
            lister,
            page_size: DEFAULT_PAGE_SIZE,
            full_list_if_expired: true,
        }
    }

    /// Items per page when the options do not set `limit`; 0 asks for one unpaginated list.
    pub fn with_page_size(mut self, page_size: i64) -> Self {
        self.page_size = page_size;
        self
    }

    /// Whether [`list`](Self::list) answers an expired `continue` token with one full list at
    /// the original version (the default) rather than the 410 error.
    pub fn with_full_list_if_expired(mut self, full_list_if_expired: bool) -> Self {
        self.full_list_if_expired = full_list_if_expired;
        self
    }

    /// Lists every item, following `continue` tokens.
    pub async fn list(&self, options: ListOptions) -> Result<PagedList<K>, Error> {
        self.list_map(options, |item| item).await
    }

    /// Lists every item and turns each into a `T` as its page arrives, so a page's objects
    /// can be converted (or shared, or dropped) before the next page is fetched.
    ///
    /// After an expired `continue` token the items gathered so far are dropped and the full
    /// list is mapped again from its start.
    pub async fn list_map<T>(
        &self,
        options: ListOptions,
        mut map: impl FnMut(K) -> T,
    ) -> Result<PagedList<T>, Error> {
        let mut items = Vec::new();
        let listed = self
            .list_each(options, |listed| match listed {
                Listed::Page(len) => items.reserve(len),
                Listed::Item(item) => items.push(map(item)),
                Listed::Restart => items = Vec::new(),
            })
            .await?;
        Ok(PagedList {
            items,
            resource_version: listed.resource_version,
            paginated: listed.paginated,
        })
    }

    /// The loop behind [`list_map`](Self::list_map): hands `each` every item as its page
    /// arrives, and says when the items handed so far are void (an expired `continue` token,
    /// after which the full list follows from its start). The returned list has no items.
    pub(crate) async fn list_each(
        &self,
        options: ListOptions,
        mut each: impl FnMut(Listed<K>),
    ) -> Result<PagedList<()>, Error> {
        let original = options.clone();
        let mut options = self.first_page_options(options);
        let mut list = PagedList {
            items: Vec::new(),
            resource_version: String::new(),
            paginated: false,
        };
        loop {
            let page = match self.lister.list(options.clone()).await {
                Ok(page) => page,
                Err(e)
                    if self.full_list_if_expired
                        && e.is_resource_expired()
                        && options.continue_token.is_some() =>
                {
                    tracing::debug!(
                        error = %e,
                        "continue token expired, listing in full at the original version"
                    );
                    each(Listed::Restart);
                    let mut full = original.limit(0);
                    full.continue_token = None;
                    let full = self.lister.list(full).await?;
                    list.resource_version = full.metadata.resource_version;
                    each(Listed::Page(full.items.len()));
                    full.items
                        .into_iter()
                        .for_each(|item| each(Listed::Item(item)));
                    return Ok(list);
                }
                Err(e) => return Err(e),
            };
            if options.continue_token.is_none() {
                list.resource_version
                    .clone_from(&page.metadata.resource_version);
            }
            let next = page.metadata.continue_token;
            each(Listed::Page(page.items.len()));
            page.items
                .into_iter()
                .for_each(|item| each(Listed::Item(item)));
            if next.is_empty() {
                return Ok(list);
            }
            list.paginated = true;
            options = next_page_options(options, next);
        }
    }

    /// The list page by page. An error (an expired `continue` token included) is the last
    /// item.
    pub fn pages(&self, options: ListOptions) -> BoxStream<'static, Result<ObjectList<K>, Error>> {
        let lister = Arc::clone(&self.lister);
        let first = Some(self.first_page_options(options));
        stream::unfold(first, move |options| {
            let lister = Arc::clone(&lister);
            async move {
                let options = options?;
                match lister.list(options.clone()).await {
                    Ok(mut page) => {
                        let next = std::mem::take(&mut page.metadata.continue_token);
                        let following =
                            (!next.is_empty()).then(|| next_page_options(options, next.clone()));
                        page.metadata.continue_token = next;
                        Some((Ok(page), following))
                    }
                    Err(e) => Some((Err(e), None)),
                }
            }
        })
        .boxed()
    }

    /// The list item by item, holding one page at a time. An error is the last item.
    pub fn items(&self, options: ListOptions) -> BoxStream<'static, Result<K, Error>> {
        let pages = self.pages(options);
        stream::unfold(
            (pages, VecDeque::new()),
            |(mut pages, mut buffered)| async move {
                loop {
                    if let Some(item) = buffered.pop_front() {
                        return Some((Ok(item), (pages, buffered)));
                    }
                    match pages.next().await? {
                        Ok(page) => buffered = page.items.into(),
                        Err(e) => return Some((Err(e), (stream::empty().boxed(), buffered))),
                    }
                }
            },
        )
        .boxed()
    }

    fn first_page_options(&self, mut options: ListOptions) -> ListOptions {
        if options.limit == 0 {
            options.limit = self.page_size;
        }
        options
    }
}

/// The options of the page after one whose `continue` token is `token`: the token carries
/// the version, so the version fields go.
fn next_page_options(mut options: ListOptions, token: String) -> ListOptions {
    options.continue_token = Some(token);
    options.resource_version = None;
    options.resource_version_match = None;
    options
}

#[cfg(test)]
mod tests {
    use kclient_apimachinery::ListMeta;

    use super::*;
    use crate::example_object::Pod;
    use crate::scripted::*;

    fn page_of(rv: &str, next: &str, names: &[&str]) -> ObjectList<Pod> {
        ObjectList {
            metadata: ListMeta {
                resource_version: rv.into(),
                continue_token: next.into(),
                ..ListMeta::default()
            },
            items: names.iter().map(|n| pod(n, rv)).collect(),
        }
    }

    fn names(items: &[Pod]) -> Vec<&str> {
        items.iter().map(|p| p.name.as_str()).collect()
    }

    fn listed(lw: &Scripted) -> Vec<(Option<String>, Option<String>, i64)> {
        lw.calls()
            .into_iter()
            .map(|c| match c {
                Call::List(o) => (o.resource_version, o.continue_token, o.limit),
                Call::Watch(_) => panic!("the pager never watches"),
            })
            .collect()
    }

    fn at(rv: &str) -> ListOptions {
        ListOptions::default().resource_version(rv)
    }

    #[tokio::test]
    async fn list_follows_tokens_and_keeps_the_first_pages_version() {
        let lw = Scripted::new();
        lw.push_list(Ok(page_of("10", "t1", &["a", "b"])));
        lw.push_list(Ok(page_of("11", "t2", &["c", "d"])));
        lw.push_list(Ok(page_of("12", "", &["e"])));
        let pager = ListPager::new(lw.clone()).with_page_size(2);
        let all = pager.list(at("0")).await.unwrap();
        assert_eq!(names(&all.items), ["a", "b", "c", "d", "e"]);
        assert_eq!(all.resource_version, "10");
        assert!(all.paginated);
        assert_eq!(
            listed(&lw),
            [
                (Some("0".into()), None, 2),
                (None, Some("t1".into()), 2),
                (None, Some("t2".into()), 2),
            ]
        );
    }

    #[tokio::test]
    async fn an_expired_token_falls_back_to_one_full_list_at_the_original_version() {
        let lw = Scripted::new();
        lw.push_list(Ok(page_of("10", "t1", &["a", "b"])));
        lw.push_list(Err(gone()));
        lw.push_list(Ok(page_of("10", "", &["a", "b", "c"])));
        let pager = ListPager::new(lw.clone()).with_page_size(2);
        let mut mapped = 0;
        let all = pager
            .list_map(at("10"), |p| {
                mapped += 1;
                p.name
            })
            .await
            .unwrap();
        assert_eq!(all.items, ["a", "b", "c"]);
        assert_eq!(
            mapped, 5,
            "the first page is mapped, then the full list again"
        );
        assert_eq!(
            listed(&lw),
            [
                (Some("10".into()), None, 2),
                (None, Some("t1".into()), 2),
                (Some("10".into()), None, 0),
            ]
        );

        // Without the fallback the 410 is the answer.
        let lw = Scripted::new();
        lw.push_list(Ok(page_of("10", "t1", &["a"])));
        lw.push_list(Err(gone()));
        let strict = ListPager::new(lw)
            .with_page_size(1)
            .with_full_list_if_expired(false);
        assert!(
            strict
                .list(at("10"))
                .await
                .unwrap_err()
                .is_resource_expired()
        );
    }

    #[tokio::test]
    async fn a_failure_on_the_first_page_is_not_retried() {
        let lw = Scripted::new();
        lw.push_list(Err(gone()));
        let pager = ListPager::new(lw.clone());
        assert!(pager.list(at("5")).await.unwrap_err().is_resource_expired());
        assert_eq!(listed(&lw).len(), 1);
    }

    #[tokio::test]
    async fn pages_and_items_stream_and_end_on_an_error() {
        let lw = Scripted::new();
        lw.push_list(Ok(page_of("10", "t1", &["a", "b"])));
        lw.push_list(Ok(page_of("10", "", &["c"])));
        let pager = ListPager::new(lw.clone()).with_page_size(2);
        let pages: Vec<_> = pager.pages(ListOptions::default()).collect().await;
        let sizes: Vec<usize> = pages
            .iter()
            .map(|p| p.as_ref().unwrap().items.len())
            .collect();
        assert_eq!(sizes, [2, 1]);
        assert_eq!(pages[0].as_ref().unwrap().metadata.continue_token, "t1");

        lw.push_list(Ok(page_of("10", "t1", &["a", "b"])));
        lw.push_list(Err(gone()));
        let items: Vec<_> = pager.items(ListOptions::default()).collect().await;
        assert_eq!(items.len(), 3);
        assert_eq!(items[0].as_ref().unwrap().name, "a");
        assert_eq!(items[1].as_ref().unwrap().name, "b");
        assert!(items[2].as_ref().unwrap_err().is_resource_expired());
    }
}
