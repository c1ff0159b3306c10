// The team's segments and topics by id (the first 100 of each): what the list and the composer show and pick.
import { useMemo } from 'react';
import { api } from '../../api/client';
import { useLoad, type Load } from '../../ui';

export interface Names {
  segments: Map<string, string>;
  topics: Map<string, string>;
  segmentList: Load<{ id: string; name: string }[]>;
  topicList: Load<{ id: string; name: string }[]>;
}

const asList = <T extends { id: string; name: string }>(l: Load<{ data: T[] }>): Load<T[]> =>
  l.state === 'ready' ? { state: 'ready', data: l.data.data } : l;

export function useNames(): Names {
  const [segments] = useLoad(() => api.GET('/segments', { params: { query: { limit: '100' } } }), []);
  const [topics] = useLoad(() => api.GET('/topics', { params: { query: { limit: '100' } } }), []);
  return useMemo(() => {
    const segmentList = asList(segments);
    const topicList = asList(topics);
    const map = (l: Load<{ id: string; name: string }[]>) =>
      new Map(l.state === 'ready' ? l.data.map((x) => [x.id, x.name]) : []);
    return { segments: map(segmentList), topics: map(topicList), segmentList, topicList };
  }, [segments, topics]);
}
